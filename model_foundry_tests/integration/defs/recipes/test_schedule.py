"""A recipe on its schedule, as Dagster runs it: the schedule evaluated at a tick, its run
request executed as a run of the recipe's job in a real Dagster instance, on the slot
simulator and a real DuckDB file. An incremental SQL seed takes only the inbox rows landed
since the last scheduled run; with ``export: {on_schedule: true}`` the job exports after the
rows, and a tick with no new cell writes no new version."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from model_foundry.defs.recipes.component import recipe_file_definitions
from model_foundry.defs.resources import resources_from_env
from model_foundry.lib import storage
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.recipe_helpers import NEW_SEARCHES, QUESTIONS, land_searches, write_recipe
from model_foundry_tests.slot_fixtures import requests_served

pytestmark = pytest.mark.timeout(600)

SCHEDULE = "*/30 * * * *"
FIRST_TICK = datetime(2026, 12, 3, 4, 0, tzinfo=UTC)


@pytest.fixture
def env(tmp_path: Path, fast_slots: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    data = tmp_path / "data"
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(data))
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(data / "foundry.duckdb"))
    monkeypatch.setenv("MODEL_FOUNDRY_SLOTS", str(fast_slots))
    monkeypatch.setenv("MODEL_FOUNDRY_SLOT_LIMITER", "flock")
    monkeypatch.setenv("MODEL_FOUNDRY_TIMEZONE", "UTC")
    monkeypatch.delenv("NATS_URL", raising=False)
    return {"db": data / "foundry.duckdb", "datasets": data / "datasets", "root": tmp_path}


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    home = tmp_path / "dagster_home"
    home.mkdir()
    with quiet_instance(temp_dir=str(home)) as made:
        yield made


def _definitions(root: Path, attributes: dict[str, Any]) -> dg.Definitions:
    path = write_recipe(root / "recipe", attributes)
    return dg.Definitions.merge(
        recipe_file_definitions(path), dg.Definitions(resources=resources_from_env())
    )


def _tick(defs: dg.Definitions, instance: dg.DagsterInstance,
          at: datetime) -> dg.ExecuteInProcessResult:  # fmt: skip
    """The schedule's tick at ``at``: its one run request, executed as a run of its job."""
    schedule = defs.resolve_schedule_def("recipe_new_searches_schedule")
    context = dg.build_schedule_context(instance=instance, scheduled_execution_time=at)
    requests = schedule.evaluate_tick(context).run_requests or []
    assert len(requests) == 1
    job = defs.resolve_job_def(schedule.job_name)
    result = job.execute_in_process(
        run_config=requests[0].run_config, instance=instance, tags=requests[0].tags
    )
    assert result.success
    return result


def _meta(result: dg.ExecuteInProcessResult, node: str) -> dict[str, Any]:
    (done,) = result.asset_materializations_for_node(node)
    return {k: getattr(v, "value", v) for k, v in done.metadata.items()}


def _scheduled(export: bool) -> dict[str, Any]:
    attributes = {**copy.deepcopy(NEW_SEARCHES), "schedule": SCHEDULE}
    if export:
        attributes["export"] = {"on_schedule": True}
    return attributes


def _query_rows(db: Path) -> list[tuple[int, str]]:
    with storage.connect(db, read_only=True) as con:
        return con.execute("SELECT row_index, query FROM recipe_new_searches "
                           "ORDER BY row_index").fetchall()  # fmt: skip


def test_the_second_scheduled_run_takes_only_the_rows_landed_since_the_first(
    env: dict[str, Path], instance: dg.DagsterInstance, fast_slots: Path
) -> None:
    defs = _definitions(env["root"], _scheduled(export=False))
    # Without export: {on_schedule: true} the job is the rows alone, as before.
    assert [n.name for n in defs.resolve_job_def("recipe_new_searches_job").graph.nodes] == [
        "recipe_new_searches"
    ]
    land_searches(env["db"], QUESTIONS[:3])
    first = _tick(defs, instance, FIRST_TICK)
    assert _meta(first, "recipe_new_searches")["rows"] == 3
    assert first.asset_materializations_for_node("recipe_new_searches_export") == []

    land_searches(env["db"], QUESTIONS[3:])
    served = requests_served(fast_slots)
    second = _tick(defs, instance, FIRST_TICK + timedelta(minutes=30))
    meta = _meta(second, "recipe_new_searches")
    # Only the search landed between the runs: one row, one request, numbered on.
    assert (meta["rows"], meta["llm_cells_asked"], meta["cells_reused"]) == (1, 1, 0)
    assert requests_served(fast_slots) == served + 1
    shown = _query_rows(env["db"])
    # One inbox commit's rows share a position; the new one is numbered after them.
    assert sorted(q for _, q in shown[:3]) == sorted(QUESTIONS[:3])
    assert [i for i, _ in shown] == [0, 1, 2, 3] and shown[3][1] == QUESTIONS[3]
    runs = instance.get_run_records(dg.RunsFilter(job_name="recipe_new_searches_job"))
    assert len(runs) == 2


def test_a_recipe_that_exports_on_its_schedule_writes_a_version_only_for_new_cells(
    env: dict[str, Path], instance: dg.DagsterInstance
) -> None:
    defs = _definitions(env["root"], _scheduled(export=True))
    nodes = [n.name for n in defs.resolve_job_def("recipe_new_searches_job").graph.nodes]
    # The export's blocking checks run in the job after it.
    assert sorted(nodes) == ["recipe_new_searches", "recipe_new_searches_export",
                             "recipe_new_searches_export_eval_sets_covered",
                             "recipe_new_searches_export_held_back_share",
                             "recipe_new_searches_export_no_secret_in_views"]  # fmt: skip
    land_searches(env["db"], QUESTIONS[:3])
    first = _tick(defs, instance, FIRST_TICK)
    checked = {e.check_name: e for e in first.get_asset_check_evaluations()}
    assert sorted(checked) == ["eval_sets_covered", "held_back_share", "no_secret_in_views"]
    assert all(e.passed for e in checked.values())
    assert checked["no_secret_in_views"].metadata["rows_scanned"].value >= 3
    rows, exported = (_meta(first, "recipe_new_searches"),
                      _meta(first, "recipe_new_searches_export"))  # fmt: skip
    assert rows["rows"] == 3 and exported["rows"] == 3
    # What the UI shows: the recipe's columns, and its rows' text scrubbed and cut.
    assert {"query", "answer", "messages"} <= {
        c.name for c in exported["dagster/column_schema"].columns
    }
    previewed = [r.data for r in exported["preview"].records]
    assert [r["cause"] for r in previewed] == ["kept"] * 3
    assert all(any(r["text"].startswith(q) for q in QUESTIONS) for r in previewed)
    folder = Path(exported["export_path"])
    assert folder.parent == env["datasets"] / "new_searches"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["recipe"]["fingerprint"]

    # No new inbox row: no new cell, so no new version; the materialization says which holds
    # the rows.
    second = _tick(defs, instance, FIRST_TICK + timedelta(minutes=30))
    assert _meta(second, "recipe_new_searches")["rows"] == 0
    same = _meta(second, "recipe_new_searches_export")
    assert same["unchanged"] is True and same["version"] == folder.name
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]

    land_searches(env["db"], QUESTIONS[3:])
    third = _tick(defs, instance, FIRST_TICK + timedelta(minutes=60))
    assert _meta(third, "recipe_new_searches")["rows"] == 1
    newer = _meta(third, "recipe_new_searches_export")
    assert "unchanged" not in newer and newer["rows"] == 4
    assert newer["version"] != folder.name
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted(
        [folder.name, newer["version"]]
    )
    # The export asset materialized on its own still writes a version, as before.
    manual = dg.materialize([defs.resolve_assets_def("recipe_new_searches_export")],
                            instance=instance)  # fmt: skip
    assert "unchanged" not in _meta(manual, "recipe_new_searches_export")
    assert len(list(folder.parent.iterdir())) == 3
