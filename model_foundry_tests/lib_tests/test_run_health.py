"""Run health on a real Dagster instance and real processes: a reused pid or a reboot does
not keep a dead run's worker "alive"."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import dagster as dg
import pytest

from model_foundry.lib.run_health import (
    WORKER_BOOT_TAG,
    WORKER_PID_TAG,
    fail_dead_runs,
    record_worker,
    worker_alive,
)


@pytest.fixture
def sleepers() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Python processes started by the test (so any cmdline check sees "python")."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait()


def sleeper(started: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    started.append(proc)
    return proc


def started_run(instance: dg.DagsterInstance) -> str:
    run_id = str(uuid.uuid4())
    instance.add_run(
        dg.DagsterRun(job_name="__ASSET_JOB", run_id=run_id, status=dg.DagsterRunStatus.STARTED)
    )
    return run_id


def test_a_reused_pid_does_not_keep_a_dead_run_alive(
    sleepers: list[subprocess.Popen[bytes]],
) -> None:
    with dg.instance_for_test() as instance:
        run_id = started_run(instance)
        worker = sleeper(sleepers)
        record_worker(instance, run_id, worker.pid)
        assert worker_alive(instance.get_run_by_id(run_id)) is True

        worker.kill()
        worker.wait()
        # Start times are kept in clock ticks (10 ms): a real reuse of the pid comes only after
        # the pid numbers wrap around, long after; here the stranger must at least start in a
        # later tick, or it would be indistinguishable from the worker by design.
        time.sleep(0.05)
        # The kernel gives the pid to another Python process (a later run, a test runner):
        # the run's tag now names a live process that is not its worker.
        stranger = sleeper(sleepers)
        instance.add_run_tags(run_id, {WORKER_PID_TAG: str(stranger.pid)})

        assert worker_alive(instance.get_run_by_id(run_id)) is False
        assert fail_dead_runs(instance) == [run_id]
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE


def test_a_run_from_before_a_reboot_is_dead_whatever_its_pid_runs_now(
    sleepers: list[subprocess.Popen[bytes]],
) -> None:
    with dg.instance_for_test() as instance:
        run_id = started_run(instance)
        worker = sleeper(sleepers)
        record_worker(instance, run_id, worker.pid)
        instance.add_run_tags(run_id, {WORKER_BOOT_TAG: str(uuid.uuid4())})  # another boot

        assert worker_alive(instance.get_run_by_id(run_id)) is False
        assert fail_dead_runs(instance) == [run_id]
