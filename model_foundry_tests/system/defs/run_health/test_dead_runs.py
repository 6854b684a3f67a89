"""Run health on a real Dagster instance and real processes: a reused pid, a reboot or a
retry's copied tags do not keep a dead run's worker "alive", and the record stays out of the
runs list."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from model_foundry.defs.run_health.dead_runs import (
    WORKER_TAG,
    fail_dead_runs,
    record_worker,
    worker_of,
)
from model_foundry.lib.run_worker import RunWorker
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.tiers import REPO_ROOT

WORKSPACE = REPO_ROOT / "workspace.yaml"


@pytest.fixture
def sleepers() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait()


def sleeper(started: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    started.append(proc)
    return proc


def started_run(instance: dg.DagsterInstance, tags: dict[str, str] | None = None) -> str:
    run_id = str(uuid.uuid4())
    instance.add_run(
        dg.DagsterRun(
            job_name="__ASSET_JOB",
            run_id=run_id,
            status=dg.DagsterRunStatus.STARTED,
            tags=tags or {},
        )
    )
    return run_id


def rewrite(instance: dg.DagsterInstance, worker: RunWorker) -> None:
    instance.add_run_tags(worker.run_id, {WORKER_TAG: worker.as_json()})


def test_a_reused_pid_does_not_keep_a_dead_run_alive(
    sleepers: list[subprocess.Popen[bytes]],
) -> None:
    with quiet_instance() as instance:
        run_id = started_run(instance)
        worker = record_worker(instance, run_id, sleeper(sleepers).pid)
        assert worker_of(instance.get_run_by_id(run_id)) == worker
        assert worker.alive() is True

        sleepers[0].kill()
        sleepers[0].wait()
        # Start times are kept in clock ticks (10 ms): a real reuse of the pid comes only after
        # the pid numbers wrap around, long after; here the stranger must at least start in a
        # later tick, or it would be indistinguishable from the worker by design.
        time.sleep(0.05)
        # The kernel gives the pid to another Python process (a later run, a test runner):
        # the run's record now names a live process that is not its worker.
        rewrite(instance, dataclasses.replace(worker, pid=sleeper(sleepers).pid))

        assert worker_of(instance.get_run_by_id(run_id)).alive() is False
        assert fail_dead_runs(instance) == [run_id]
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE


def test_a_run_from_before_a_reboot_is_dead_whatever_its_pid_runs_now(
    sleepers: list[subprocess.Popen[bytes]],
) -> None:
    with quiet_instance() as instance:
        run_id = started_run(instance)
        worker = record_worker(instance, run_id, sleeper(sleepers).pid)
        rewrite(instance, dataclasses.replace(worker, boot_id=str(uuid.uuid4())))  # another boot

        assert worker_of(instance.get_run_by_id(run_id)).alive() is False
        assert fail_dead_runs(instance) == [run_id]


def test_a_retry_is_not_judged_by_its_parents_dead_worker() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with quiet_instance() as instance:
        parent = started_run(instance)
        record_worker(instance, parent, gone.pid)
        parent_tags = instance.get_run_by_id(parent).tags
        # Dagster's retries copy the parent's tags; the retry's worker has not started yet.
        retry = started_run(instance, tags=dict(parent_tags))
        assert worker_of(instance.get_run_by_id(retry)) is None
        assert fail_dead_runs(instance) == [parent]
        assert instance.get_run_by_id(retry).status == dg.DagsterRunStatus.STARTED


RUNS_QUERY = """
query {
  runsOrError {
    ... on Runs { results { runId tags { key value } } }
  }
}
"""


def test_the_runs_list_shows_the_runs_tags_and_not_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql

    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(tmp_path / "db.duckdb"))
    home = tmp_path / "dagster_home"
    home.mkdir()
    with (
        quiet_instance(temp_dir=str(home)) as instance,
        define_out_of_process_context(str(WORKSPACE), None, instance) as ctx,
    ):
        run_id = started_run(instance, tags={"model_foundry/inbox_subject": "llm.tool_call"})
        record_worker(instance, run_id, os.getpid())
        assert WORKER_TAG in instance.get_run_by_id(run_id).tags
        runs = execute_dagster_graphql(ctx, RUNS_QUERY).data["runsOrError"]["results"]
    shown = {t["key"]: t["value"] for t in next(r for r in runs if r["runId"] == run_id)["tags"]}
    assert shown == {"model_foundry/inbox_subject": "llm.tool_call"}
