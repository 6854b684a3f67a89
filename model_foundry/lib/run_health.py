"""Runs whose worker died: found at once, marked failed, so nothing waits on them for ever.

Dagster's default run launcher cannot tell whether a STARTED run's worker process is still
alive: a run killed with the daemon (or by a reboot) stays STARTED for ever. The inbox sensor
then skips its subject, and declarative automation never again updates an asset "in
progress". Every run of this code location records its worker as run tags
(:func:`record_worker`, called when the DuckDB resource is set up in the worker): pid, host,
the kernel's boot id and the process's start time. A pid alone is not enough: the kernel
hands a dead worker's pid to the next process, and after a reboot any pid may belong to
anything. A worker counts as alive only if its pid runs a process that started at the
recorded time, in the same boot. The dead-run sensor fails the STARTED runs whose worker is
gone; run retries and the sensors then take over, and the idempotent stores make the retry
finish only what was left.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import dagster as dg

WORKER_PID_TAG = "model_foundry/worker_pid"
WORKER_HOST_TAG = "model_foundry/worker_host"
# /proc/sys/kernel/random/boot_id: a new value on every boot.
WORKER_BOOT_TAG = "model_foundry/worker_boot_id"
# Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot.
WORKER_START_TAG = "model_foundry/worker_start_ticks"
CHECK_INTERVAL_S = 30

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str | None:
    try:
        return _BOOT_ID.read_text().strip() or None
    except OSError:
        return None


def process_start_ticks(pid: int) -> int | None:
    """When ``pid``'s process started (ticks since boot); None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ")": the fields
    # after the last ")" start at field 3, so the start time (field 22) is the 20th of them.
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def record_worker(instance: dg.DagsterInstance, run_id: str, pid: int) -> None:
    tags = {WORKER_PID_TAG: str(pid), WORKER_HOST_TAG: socket.gethostname()}
    start, boot = process_start_ticks(pid), boot_id()
    if start is not None and boot is not None:
        tags[WORKER_START_TAG] = str(start)
        tags[WORKER_BOOT_TAG] = boot
    instance.add_run_tags(run_id, tags)


def worker_alive(run: dg.DagsterRun) -> bool | None:
    """Whether the run's worker process still exists; None when this host cannot tell."""
    pid_text = run.tags.get(WORKER_PID_TAG)
    if not pid_text or run.tags.get(WORKER_HOST_TAG) != socket.gethostname():
        return None
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    recorded_boot, recorded_start = run.tags.get(WORKER_BOOT_TAG), run.tags.get(WORKER_START_TAG)
    if recorded_boot is not None and recorded_start is not None:
        # The same process: same boot, and the pid's process started when the worker did.
        if recorded_boot != boot_id():
            return False
        return str(process_start_ticks(pid)) == recorded_start
    # Runs tagged before the start time was recorded: a run worker is a Python process.
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"python" in cmdline or b"dagster" in cmdline


def _last_sign_of_life(instance: dg.DagsterInstance, record: dg.RunRecord) -> float:
    latest = instance.get_records_for_run(record.dagster_run.run_id, limit=1, ascending=False)
    if latest.records:
        return latest.records[0].event_log_entry.timestamp
    return record.start_time or record.update_timestamp.timestamp()


def why_dead(
    instance: dg.DagsterInstance, record: dg.RunRecord, *, silent_after_s: float | None = None
) -> str | None:
    """Why a STARTED run counts as dead, or None while it may be alive.

    Dead means its worker process is gone; where that cannot be checked (another host, no
    worker tag yet), and ``silent_after_s`` is given, a run that logged nothing for that
    long counts as dead too.
    """
    run = record.dagster_run
    if run.status != dg.DagsterRunStatus.STARTED:
        return None
    alive = worker_alive(run)
    if alive is False:
        return f"its worker process (pid {run.tags.get(WORKER_PID_TAG)}) is gone"
    if alive is None and silent_after_s is not None:
        silent_s = time.time() - _last_sign_of_life(instance, record)
        if silent_s > silent_after_s:
            return f"no event for {silent_s:.0f}s"
    return None


def fail_if_dead(
    instance: dg.DagsterInstance,
    record: dg.RunRecord,
    *,
    silent_after_s: float | None = None,
    then: str = "retries and sensors can finish what it left",
) -> str | None:
    """Mark ``record``'s run failed when :func:`why_dead` says so; returns the reason."""
    why = why_dead(instance, record, silent_after_s=silent_after_s)
    if why is not None:
        instance.report_run_failed(record.dagster_run, message=f"{why}; marked failed so {then}")
    return why


def fail_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark every STARTED run whose worker process is gone as failed; returns their ids."""
    records = instance.get_run_records(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])
    )
    return [r.dagster_run.run_id for r in records if fail_if_dead(instance, r) is not None]


__all__ = [
    "WORKER_BOOT_TAG",
    "WORKER_HOST_TAG",
    "WORKER_PID_TAG",
    "WORKER_START_TAG",
    "boot_id",
    "fail_dead_runs",
    "fail_if_dead",
    "process_start_ticks",
    "record_worker",
    "why_dead",
    "worker_alive",
]
