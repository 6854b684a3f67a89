"""A dataset recipe's rows exported through the datasets' export path, as Dagster runs it: the
recipe's asset on the slot simulator, then its export asset, on a real DuckDB file and a real
Dagster instance. A seed row carries a planted token, one row fails a validation, two rows
are near duplicates; the export loads under datasets 3.6 and 5.x."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
import pytest

from model_foundry.defs.recipes.component import export_key, recipe_file_definitions, recipe_key
from model_foundry.defs.resources import resources_from_env
from model_foundry.devtools import hf_datasets
from model_foundry.lib import storage
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.hf_loading import load_offline
from model_foundry_tests.lab_tokens import lab_tokens, leaks, sentences, stored_files
from model_foundry_tests.recipe_helpers import QUESTIONS, write_recipe

pytestmark = pytest.mark.timeout(600)

TOKENS = lab_tokens(31)
GITHUB = TOKENS["github"]
SECRET_QUESTION = f"why does {sentences(TOKENS)['github']} fail on the runner"
GATED_QUESTION = "is banana a good name for a DuckDB file"
# Two seed rows that differ in one word of many: near duplicates, wherever their answers go.
NEAR = (
    "our nightly pipeline writes a few million rows into one DuckDB file, deletes most of "
    "them again after the summaries are built, and the file keeps growing every week even "
    "though the tables themselves stay small; how do we get the space back without "
    "stopping the drain that writes to it all {} long"
)
NEAR_PAIR = (NEAR.format("day"), NEAR.format("night"))
SEEDS = [*QUESTIONS, SECRET_QUESTION, GATED_QUESTION, *NEAR_PAIR]

RECIPE: dict[str, Any] = {
    "name": "exported",
    "seed": {"file": "seed.jsonl"},
    "random_seed": 5,
    "columns": [
        {"name": "query", "type": "seed"},
        {"name": "budget", "type": "sampler", "sampler": "uniform", "low": 1, "high": 9,
         "integer": True},
        {"name": "question", "type": "expression", "expr": "Please answer: {{ query }}"},
        {"name": "answer", "type": "llm_text", "role": "worker", "system": "Answer briefly.",
         "prompt": "{{ question }}", "params": {"max_tokens": 128}},
        {"name": "facts", "type": "llm_structured", "role": "cheap",
         "prompt": "Topic and level of: {{ answer }}",
         "output_format": {"type": "object", "required": ["topic", "level"],
                           "properties": {"topic": {"type": "string", "maxLength": 40},
                                          "level": {"type": "integer", "minimum": 1,
                                                    "maximum": 3}}}},
        # The simulator echoes the question: the row that asks about a banana fails it.
        {"name": "no_banana", "type": "validation", "target": "answer",
         "regex": "(?s)^(?!.*banana)"},
    ],
}  # fmt: skip


def _materialize(path: Path, instance: dg.DagsterInstance, out: Path) -> dg.ExecuteInProcessResult:
    defs = recipe_file_definitions(path)
    wanted = {recipe_key("exported"), export_key("exported")}
    assets = [a for a in defs.assets or () if set(a.keys) & wanted]  # type: ignore[union-attr]
    config = {"output_dir": str(out), "test_share": 0.5, "license": "mit"}
    return dg.materialize(
        assets,  # type: ignore[arg-type]
        resources=resources_from_env(),
        instance=instance,
        run_config={"ops": {"recipe_exported_export": {"config": config}}},
        raise_on_error=False,
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, fast_slots: Path) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("recipe-export")
    data = root / "data"
    path = write_recipe(root / "recipe", RECIPE, seeds=SEEDS)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MODEL_FOUNDRY_DATA_DIR", str(data))
        mp.setenv("MODEL_FOUNDRY_DUCKDB", str(data / "foundry.duckdb"))
        mp.setenv("MODEL_FOUNDRY_SLOTS", str(fast_slots))
        mp.setenv("MODEL_FOUNDRY_SLOT_LIMITER", "flock")
        mp.delenv("NATS_URL", raising=False)
        home = root / "dagster_home"
        home.mkdir()
        with quiet_instance(temp_dir=str(home)) as instance:
            result = _materialize(path, instance, data / "datasets")
            assert result.success
            meta = result.asset_materializations_for_node("recipe_exported_export")[0].metadata
            folder = Path(meta["export_path"].value)
            yield {"folder": folder, "meta": meta, "home": home, "db": data / "foundry.duckdb"}


def _samples(folder: Path) -> list[dict[str, Any]]:
    return pq.read_table(folder / "samples.parquet").to_pylist()


def _by_query(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["query"]: r for r in rows}


def _export_files(folder: Path) -> dict[str, str]:
    """Every file of the export as text, Parquet files by their rows."""
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            out[str(path)] = json.dumps(pq.read_table(path).to_pylist(), default=str)
        else:
            out[str(path)] = path.read_text(encoding="utf-8")
    return out


def test_the_planted_token_is_scrubbed_everywhere_but_duckdb(exported) -> None:
    folder = exported["folder"]
    assert leaks(_export_files(folder), [GITHUB]) == []
    rows = _samples(folder)
    secret = next(r for r in rows if "fail on the runner" in r["query"])
    assert "[REDACTED:github" in secret["query"] and secret["kept"]
    # Its answer echoed the token, and the chat holds the question again: all scrubbed (query,
    # question, answer and the chat's two turns: five markers).
    assert "[REDACTED:github" in secret["answer"]
    assert all("[REDACTED:github" in m["content"] for m in secret["messages"][1:])
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["redactions_by_kind"]["github_token"] == 5
    # The tables keep the data verbatim: only the export is scrubbed.
    with storage.connect(exported["db"], read_only=True) as con:
        (stored,) = con.execute(
            "SELECT count(*) FROM recipe_exported WHERE contains(query, ?)", [GITHUB.value]
        ).fetchone()
    assert stored == 1


def test_the_token_never_reaches_dagsters_storage(exported) -> None:
    assert leaks(stored_files(exported["home"]), [GITHUB]) == []
    meta = exported["meta"]
    assert meta["rows"].value == len(SEEDS)
    assert meta["held_back_by_gate"].value["no_banana"] == 1


def test_a_row_a_validation_failed_is_left_out_with_its_cause(exported) -> None:
    folder = exported["folder"]
    rows = _by_query(_samples(folder))
    gated = rows[GATED_QUESTION]
    assert not gated["kept"] and gated["dropped_by"] == "gate:no_banana"
    assert gated["gate"] == "no_banana" and gated["no_banana"] is False
    assert gated["causes"].startswith("no_banana: does not match")
    kept_text = ""
    for split_file in (folder / "openai").glob("*.jsonl"):
        kept_text += split_file.read_text(encoding="utf-8")
    for split_file in (folder / "hf" / "rows").glob("*.parquet"):
        kept_text += json.dumps(pq.read_table(split_file).to_pylist(), default=str)
    assert "banana a good name" not in kept_text
    assert QUESTIONS[0] in kept_text
    with storage.connect(exported["db"], read_only=True) as con:
        (cause,) = con.execute(
            "SELECT causes FROM recipe_exported WHERE query = ?", [GATED_QUESTION]
        ).fetchone()
    assert cause.startswith("no_banana: does not match")


def test_near_duplicate_rows_share_a_cluster_and_a_split(exported) -> None:
    rows = _samples(exported["folder"])
    first, second = (_by_query(rows)[q] for q in NEAR_PAIR)
    assert first["cluster_id"] == second["cluster_id"] == first["id"]
    assert first["split"] == second["split"]
    assert first["kept"] and second["dropped_by"] == "duplicate"
    # Every other row is its own cluster, so the splits are a real draw: both are used.
    others = [r for r in rows if r["query"] not in NEAR_PAIR]
    assert len({r["cluster_id"] for r in others}) == len(others)
    assert {r["split"] for r in rows} == {"train", "test"}


def test_the_card_holds_the_recipe_and_each_columns_figures(exported) -> None:
    folder = exported["folder"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "Dataset recipe rows exported" in card
    assert 'expr: "Please answer: {{ query }}"' in card or "Please answer: {{ query }}" in card
    manifest = json.loads((folder / "manifest.json").read_text())
    recipe = manifest["recipe"]
    assert recipe["recipe"]["columns"][3]["prompt"] == "{{ question }}"
    answer = recipe["columns"]["answer"]
    assert answer["role"] == "worker" and answer["slots"] and answer["models"]
    assert answer["ok"] == len(SEEDS) and answer["completion_tokens"] > 0
    assert recipe["columns"]["no_banana"]["rejected_by_cause"] == {
        "does not match '(?s)^(?!.*banana)'": 1
    }
    for name in ("answer", "facts", "no_banana"):
        assert f"| {name} |" in card
    assert manifest["held_back_by_gate"]["no_banana"] == 1


def test_the_openai_view_is_the_chat_columns_conversation(exported) -> None:
    folder = exported["folder"]
    lines = [
        json.loads(line)
        for f in sorted((folder / "openai").glob("*.jsonl"))
        for line in f.read_text(encoding="utf-8").splitlines()
    ]
    kept = [r for r in _samples(folder) if r["kept"]]
    assert len(lines) == len(kept) == len(SEEDS) - 2
    first = next(x for x in lines if QUESTIONS[0] in x["messages"][1]["content"])
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant"]
    assert first["messages"][0]["content"] == "Answer briefly."
    assert first["messages"][1]["content"] == f"Please answer: {QUESTIONS[0]}"
    assert first["messages"][2]["content"].startswith("echo:")


@pytest.mark.parametrize("environment", list(hf_datasets.ENVIRONMENTS))
def test_datasets_loads_the_kept_rows_as_written(exported, environment, tmp_path) -> None:
    folder = exported["folder"]
    result = load_offline(environment, folder, tmp_path / "hf")
    assert result["header"]["license"] == "mit"
    loaded = result["loaded"]["rows"]
    source = _samples(folder)
    columns = [c for c in pq.read_schema(folder / "hf" / "rows" / "train.parquet").names]
    assert set(loaded) == {"train", "test"}
    for split, rows in loaded.items():
        wanted = [{c: r[c] for c in columns} for r in source if r["kept"] and r["split"] == split]
        assert rows == wanted, split
    every = [r for rows in loaded.values() for r in rows]
    assert all(isinstance(r["facts_level"], int) and isinstance(r["budget"], int) for r in every)
