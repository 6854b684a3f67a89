"""Runs whose worker died: found at once, marked failed, so nothing waits on them for ever.

Dagster's default run launcher cannot tell whether a STARTED run's worker process is still
alive (it has no ``check_run_worker_health``): a run killed with the daemon, or by a reboot,
stays STARTED for ever. The inbox sensor then skips its subject, and declarative automation
never again updates an asset "in progress". Every run of this code location records its
worker (:func:`record_worker`, called when the DuckDB resource is set up in the worker) in one
tag under Dagster's hidden prefix ``.dagster/``: the UI's runs list and run page leave such
tags out, so the run's own tags (partition, subject) stay in view. The tag names its run, so a
retry, which copies its parent's tags, is never judged by its parent's dead worker. The
dead-run sensor fails the STARTED runs whose worker is gone; run retries and the sensors then
take over, and the idempotent stores make the retry finish only what was left.
"""

from __future__ import annotations

import time

import dagster as dg

from model_foundry.lib.run_worker import RunWorker

WORKER_TAG = ".dagster/model_foundry/worker"
CHECK_INTERVAL_S = 30


def record_worker(instance: dg.DagsterInstance, run_id: str, pid: int) -> RunWorker:
    worker = RunWorker.of(run_id, pid)
    instance.add_run_tags(run_id, {WORKER_TAG: worker.as_json()})
    return worker


def worker_of(run: dg.DagsterRun) -> RunWorker | None:
    """The run's own worker, if it recorded one (not a parent's, copied with a retry)."""
    text = run.tags.get(WORKER_TAG)
    worker = RunWorker.from_json(text) if text else None
    return worker if worker is not None and worker.run_id == run.run_id else None


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
    worker recorded yet), and ``silent_after_s`` is given, a run that logged nothing for that
    long counts as dead too.
    """
    run = record.dagster_run
    if run.status != dg.DagsterRunStatus.STARTED:
        return None
    worker = worker_of(run)
    alive = worker.alive() if worker is not None else None
    if worker is not None and alive is False:
        return f"its worker process (pid {worker.pid}) is gone"
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
    "CHECK_INTERVAL_S",
    "WORKER_TAG",
    "fail_dead_runs",
    "fail_if_dead",
    "record_worker",
    "why_dead",
    "worker_of",
]
