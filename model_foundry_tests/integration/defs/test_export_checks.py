"""The blocking checks and the metadata of an export asset, on the session export: a real
DuckDB inbox of agent sessions, real in-process Dagster runs. A clean export passes; a
secret written into a view after the export, or a held-back share above the user's limit,
fails the check, fails the run and keeps what depends on the export from running."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
import pytest

from model_foundry.defs import keys
from model_foundry.defs.datasets.session_export import session_dataset, session_dataset_checks
from model_foundry.defs.export_checks import EVAL_SETS_CHECK, HELD_BACK_CHECK, SECRET_CHECK
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.devtools.sample_events import sample_events
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.shared.defs.datasets.session_dataset import _store

pytestmark = pytest.mark.timeout(300)

LIMIT = "MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE"
# A token in a shape the scrubber's rules name (a GitHub personal access token).
PLANTED = "ghp_" + "Zq8Xw2Lm4Np6Rt1Vb3Yc5Ke7Hj9Ga0Sd2Fu4"


@dg.asset(deps=[keys.SESSION_DATASET])
def reads_the_export() -> None:
    """Stands for what a lab runs on the export (a fine-tune, a publish)."""


def _defs(db: Path) -> dg.Definitions:
    return dg.Definitions(
        assets=[session_dataset, reads_the_export],
        asset_checks=session_dataset_checks,
        resources={"duckdb": FoundryDuckDB(database=str(db))},
    )


def _run(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    selection: list[dg.AssetKey | dg.AssetCheckKey],
    out: Path,
    version: str,
) -> dg.ExecuteInProcessResult:
    assets = [k for k in selection if isinstance(k, dg.AssetKey)]
    checks = [k for k in selection if isinstance(k, dg.AssetCheckKey)]
    job = dg.define_asset_job(
        f"export_{version}",
        selection=dg.AssetSelection.assets(*assets) | dg.AssetSelection.checks(*checks)
        if checks
        else dg.AssetSelection.assets(*assets).without_checks(),
    )
    config = {"name": "agents", "version": version, "output_dir": str(out), "license": "mit"}
    return (
        dg.Definitions.merge(defs, dg.Definitions(jobs=[job]))
        .resolve_job_def(job.name)
        .execute_in_process(
            instance=instance,
            run_config={"ops": {"session_dataset": {"config": config}}} if assets else {},
            raise_on_error=False,
        )
    )


def _check(result: dg.ExecuteInProcessResult, name: str) -> Any:
    found = [e for e in result.get_asset_check_evaluations() if e.check_name == name]
    assert len(found) == 1, [e.check_name for e in result.get_asset_check_evaluations()]
    return found[0]


def _ran(result: dg.ExecuteInProcessResult, step: str) -> bool:
    return any(e.step_key == step and e.is_step_success for e in result.all_events)


SECRET_KEY = dg.AssetCheckKey(keys.SESSION_DATASET, SECRET_CHECK)
HELD_KEY = dg.AssetCheckKey(keys.SESSION_DATASET, HELD_BACK_CHECK)
EVAL_KEY = dg.AssetCheckKey(keys.SESSION_DATASET, EVAL_SETS_CHECK)
EVERYTHING = [
    keys.SESSION_DATASET, dg.AssetKey("reads_the_export"), SECRET_KEY, HELD_KEY, EVAL_KEY
]  # fmt: skip


@pytest.fixture(name="inbox", scope="module")
def inbox_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("inbox") / "foundry.duckdb"
    _store(db, list(sample_events(300, sessions=8, seed=5)), 1)
    return db


def test_a_clean_export_passes_and_shows_its_columns_rows_and_preview(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(LIMIT, raising=False)
    with quiet_instance() as instance:
        result = _run(_defs(inbox), instance, EVERYTHING, tmp_path / "out", "clean")
    assert result.success
    secret, held = _check(result, SECRET_CHECK), _check(result, HELD_BACK_CHECK)
    assert secret.passed and held.passed
    assert secret.metadata["secrets_found"].value == 0
    assert secret.metadata["rows_scanned"].value > 0 and secret.metadata["files_scanned"].value
    assert _ran(result, "reads_the_export")

    meta = result.asset_materializations_for_node("session_dataset")[0].metadata
    folder = Path(meta["export_path"].value)
    rows = pq.read_table(folder / "samples.parquet").to_pylist()
    kept = [r for r in rows if r["kept"]]
    assert meta["dagster/row_count"].value == len(kept)
    columns = [c.name for c in meta["dagster/column_schema"].value.columns]
    assert columns == pq.read_schema(next((folder / "hf" / "sessions").glob("*.parquet"))).names
    types = {c.name: c.type for c in meta["dagster/column_schema"].value.columns}
    assert types["messages"] == "list<struct>" and types["turns"] == "int32"
    # The threshold's figures are those of samples.parquet.
    held_rows = [r for r in rows if not r["kept"]]
    assert held.metadata["held_back"].value == len(held_rows) > 0
    assert held.metadata["records"].value == len(rows)
    assert held.metadata["max_share"].value == 0.5
    preview = meta["preview"].value.records
    # A few kept records, then a few held back with their cause, in the file's order.
    causes = [r.data["cause"] for r in preview]
    assert causes == ["kept"] * min(5, len(kept)) + [r["dropped_by"] for r in held_rows][:5]
    assert [r.data["id"] for r in preview] == [r["id"] for r in kept][:5] + [
        r["id"] for r in held_rows
    ][:5]
    assert all(r.data["text"] and len(r.data["text"]) <= 160 for r in preview)


def test_a_secret_written_into_a_view_after_the_export_fails_its_check(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(LIMIT, raising=False)
    defs = _defs(inbox)
    with quiet_instance() as instance:
        exported = _run(defs, instance, [keys.SESSION_DATASET], tmp_path / "out", "planted")
        assert exported.success
        meta = exported.asset_materializations_for_node("session_dataset")[0].metadata
        folder = Path(meta["export_path"].value)
        # The scrubber would have removed it from the sessions: it is written after.
        jsonl = next((folder / "openai").glob("*.jsonl"))
        line = {"messages": [{"role": "user", "content": f"push with token {PLANTED} now"}]}
        with jsonl.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        checked = _run(defs, instance, [SECRET_KEY], tmp_path / "out", "planted")
    assert not checked.success
    found = _check(checked, SECRET_CHECK)
    assert not found.passed
    assert found.metadata["secrets_found"].value == 1
    assert found.metadata["secrets_by_kind"].value == {"github_token": 1}
    place = found.metadata["found_at"].value[0]
    assert place.startswith(f"openai/{jsonl.name} row ")
    # Where and what kind, never the value, in everything the run reported.
    reported = json.dumps([str(e) for e in checked.all_events])
    assert PLANTED not in reported
    failure = next(e for e in checked.all_events if e.is_step_failure)
    assert "blocking asset check" in str(failure.step_failure_data.error)


def test_a_held_back_share_above_the_limit_fails_and_stops_what_reads_the_export(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv(LIMIT, "0.01")
    with quiet_instance() as instance:
        result = _run(_defs(inbox), instance, EVERYTHING, tmp_path / "out", "low")
    assert not result.success
    held = _check(result, HELD_BACK_CHECK)
    assert not held.passed and held.metadata["max_share"].value == 0.01
    assert held.metadata["held_back_share"].value > 0.01
    assert "MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE=0.01" in held.description
    assert _check(result, SECRET_CHECK).passed
    # The export was written, but nothing downstream of it ran.
    assert result.asset_materializations_for_node("session_dataset")
    assert not _ran(result, "reads_the_export")
    assert not result.asset_materializations_for_node("reads_the_export")


def test_a_bad_limit_fails_the_check_in_one_sentence_naming_the_variable(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv(LIMIT, "half")
    with quiet_instance() as instance:
        result = _run(_defs(inbox), instance, EVERYTHING, tmp_path / "out", "bad")
    held = _check(result, HELD_BACK_CHECK)
    assert not held.passed
    assert held.description == (
        "MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE='half' is not a share between 0 and 1"
    )
    assert not _ran(result, "reads_the_export")


def test_a_materialization_without_an_export_passes_and_a_folder_gone_fails(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(LIMIT, raising=False)

    # As dataset_samples when the judged collection is exported by dataset_judgements.
    @dg.asset(key=keys.SESSION_DATASET)
    def exported_nothing() -> dg.MaterializeResult:
        return dg.MaterializeResult(metadata={"version": "v1"})

    stand_in = dg.Definitions(assets=[exported_nothing], asset_checks=session_dataset_checks)
    defs = _defs(inbox)
    with quiet_instance() as instance:
        nothing = stand_in.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=instance
        )
        assert nothing.success
        assert all(e.passed for e in nothing.get_asset_check_evaluations())
        assert _check(nothing, SECRET_CHECK).metadata["exported"].value is False

        exported = _run(defs, instance, [keys.SESSION_DATASET], tmp_path / "out", "gone")
        folder = Path(exported.asset_materializations_for_node("session_dataset")[0]
                      .metadata["export_path"].value)  # fmt: skip
        (folder / "samples.parquet").unlink()
        checked = _run(defs, instance, [SECRET_KEY, HELD_KEY], tmp_path / "out", "gone")
    assert not checked.success
    for name in (SECRET_CHECK, HELD_BACK_CHECK):
        found = _check(checked, name)
        assert not found.passed
        assert found.description == f"The export folder {folder} is gone or unfinished."


def _eval_sets(folder: Path, names: list[str]) -> Path:
    """An eval-sets file naming ``names``, each a two-item JSONL set of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["eval_sets:"]
    for name in names:
        items = [
            {"task_id": f"{name}/{i}", "prompt": f"Write a function {name} number {i} that "
             "folds a list of intervals into the fewest covering ranges and returns them"}
            for i in range(2)
        ]  # fmt: skip
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps(i) + "\n" for i in items), encoding="utf-8"
        )
        lines += [f"  {name}:", f"    path: {name}.jsonl", "    id: task_id", "    text: [prompt]"]
    file = folder / f"evals-{len(names)}.yaml"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file


def test_an_eval_set_named_after_the_export_fails_the_coverage_check(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(LIMIT, raising=False)
    monkeypatch.setenv("MODEL_FOUNDRY_EVAL_SETS", str(_eval_sets(tmp_path / "evals", ["one"])))
    defs = _defs(inbox)
    with quiet_instance() as instance:
        result = _run(defs, instance, EVERYTHING, tmp_path / "out", "evals")
        assert result.success
        covered = _check(result, EVAL_SETS_CHECK)
        assert covered.passed and covered.metadata["items_by_eval_set"].value == {"one": 2}
        # A second set named later: the export on disk was never checked against it.
        two = _eval_sets(tmp_path / "evals", ["one", "two"])
        monkeypatch.setenv("MODEL_FOUNDRY_EVAL_SETS", str(two))
        checked = _run(defs, instance, [EVAL_KEY], tmp_path / "out", "evals")
    assert not checked.success
    found = _check(checked, EVAL_SETS_CHECK)
    assert not found.passed and "eval set(s) two " in found.description
