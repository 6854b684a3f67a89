"""`model-foundry up`'s choice of Dagster storage: SQLite by default, PostgreSQL by variables.

The instance is really created (on SQLite in a temp DAGSTER_HOME, or in a PostgreSQL
database of the test's own), and what ``up`` prints and writes never holds a password.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest

from model_foundry.devtools import devstack
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import make_event
from model_foundry_tests.nats_helpers import publish
from model_foundry_tests.postgres_helpers import pg_env, require_postgres, throwaway_database

SECRET = "pw-never-written-91c2"


def test_dagster_pg_variables_put_the_instance_on_postgresql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    require_postgres()
    with throwaway_database("mf_up_storage") as pg:
        for name, value in pg_env(pg, SECRET).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
        home = devstack._dagster_home()
        out = capsys.readouterr().out
        text = (home / "dagster.yaml").read_text()
        with dg.DagsterInstance.from_config(str(home)) as instance:
            storage = type(instance.run_storage).__name__
            info = instance.info_str()
            instance.get_runs_count()
    assert f"Dagster storage: PostgreSQL postgres@127.0.0.1:5432/{pg.db}" in out
    assert "password from DAGSTER_PG_PASSWORD" in out
    assert storage == "PostgresRunStorage"
    assert "env: DAGSTER_PG_PASSWORD" in text
    for shown in (out, text, info):
        assert SECRET not in shown


def test_sensors_and_the_dead_run_sensor_judge_runs_the_same_on_postgresql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nats_client: NatsClient
) -> None:
    """The per-subject skip, a dead worker's run failed and replaced, on PostgreSQL storage."""
    from model_foundry.defs.run_health.sensors import stale_run_sensor
    from model_foundry_tests.integration.defs.inbox.test_sensors import (
        add_started_run,
        dead_pid,
        tick,
    )

    require_postgres()
    publish(
        nats_client,
        [make_event("llm.tool_call", {"tool": "grep", "arguments": {}}, "s", event_id="t1")],
    )
    with throwaway_database("mf_sensors") as pg:
        for name, value in pg_env(pg).items():
            monkeypatch.setenv(name, value)
        home = devstack.write_dagster_home(tmp_path / "home", postgres=pg)
        with dg.DagsterInstance.from_config(str(home)) as instance:
            assert type(instance.run_storage).__name__ == "PostgresRunStorage"
            alive = add_started_run(instance, subject="llm.tool_call", worker_pid=os.getpid())
            blocked = tick("llm.tool_call", instance, nats_client)
            instance.report_run_canceled(instance.get_run_by_id(alive))
            dead = add_started_run(instance, subject="llm.tool_call", worker_pid=dead_pid())
            replaced = tick("llm.tool_call", instance, nats_client)
            other = add_started_run(instance, job_name="__ASSET_JOB", worker_pid=dead_pid())
            stale_run_sensor.evaluate_tick(dg.build_sensor_context(instance=instance))
            statuses = [instance.get_run_by_id(r).status for r in (dead, other)]
    assert blocked.run_requests == []
    assert [r.partition_key for r in replaced.run_requests] == ["llm.tool_call"]
    assert statuses == [dg.DagsterRunStatus.FAILURE] * 2
