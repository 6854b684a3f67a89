"""Runs whose worker died: found at once, marked failed, so nothing waits on them for ever.

Dagster's default run launcher cannot tell whether a STARTED run's worker process is still
alive: a run killed with the daemon (or by a reboot) stays STARTED for ever. The inbox sensor
then skips its subject, and declarative automation never again updates an asset "in
progress". Every run of this code location records its worker's pid and host as run tags
(:func:`record_worker`, called when the DuckDB resource is set up in the worker), and
:data:`stale_run_sensor` fails the STARTED runs whose worker is gone; run retries and the
sensors then take over, and the idempotent stores make the retry finish only what was left.
"""

from __future__ import annotations

import socket
from pathlib import Path

import dagster as dg

WORKER_PID_TAG = "model_foundry/worker_pid"
WORKER_HOST_TAG = "model_foundry/worker_host"
CHECK_INTERVAL_S = 30


def record_worker(instance: dg.DagsterInstance, run_id: str, pid: int) -> None:
    instance.add_run_tags(run_id, {WORKER_PID_TAG: str(pid), WORKER_HOST_TAG: socket.gethostname()})


def worker_alive(run: dg.DagsterRun) -> bool | None:
    """Whether the run's worker process still exists; None when this host cannot tell."""
    pid_text = run.tags.get(WORKER_PID_TAG)
    if not pid_text or run.tags.get(WORKER_HOST_TAG) != socket.gethostname():
        return None
    try:
        cmdline = Path(f"/proc/{int(pid_text)}/cmdline").read_bytes()
    except (OSError, ValueError):
        return False
    # A reused pid belongs to some other program; a run worker is a Python process.
    return b"python" in cmdline or b"dagster" in cmdline


def fail_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark every STARTED run whose worker process is gone as failed; returns their ids."""
    failed = []
    for record in instance.get_run_records(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])
    ):
        run = record.dagster_run
        if worker_alive(run) is False:
            instance.report_run_failed(
                run,
                message=(
                    f"its worker process (pid {run.tags.get(WORKER_PID_TAG)}) is gone; marked "
                    "failed so retries and sensors can finish what it left"
                ),
            )
            failed.append(run.run_id)
    return failed


__all__ = [
    "WORKER_HOST_TAG",
    "WORKER_PID_TAG",
    "fail_dead_runs",
    "record_worker",
    "worker_alive",
]
