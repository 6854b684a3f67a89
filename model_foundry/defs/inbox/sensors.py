"""One sensor per subject: request an inbox run when its consumer has messages waiting.

A tick reads consumer counts only. It never fetches or acknowledges a message, so a tick
that times out or fails loses nothing; the run it requests does the draining. A tick asks
for no second run while one for the same subject is queued or running.
"""

# No `from __future__ import annotations`: Dagster reads the config and resource types of
# decorated functions from their live annotations.

import time

import dagster as dg

from model_foundry.defs.inbox.assets import INBOX_SUBJECT_TAG
from model_foundry.defs.inbox.jobs import inbox_job
from model_foundry.defs.resources import NatsResource
from model_foundry.defs.run_health.dead_runs import fail_if_dead
from model_foundry.lib import settings
from model_foundry.lib.events import SUBJECTS
from model_foundry.lib.inbox.sensor_decision import decide_inbox_tick
from model_foundry.lib.nats.connection import NatsClient, NatsUnavailableError, consumer_name

IN_PROGRESS = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def sensor_interval_s() -> int:
    return settings.sensor_interval_s()


def stale_run_s() -> float:
    """Silence after which a STARTED inbox run whose worker cannot be checked counts as dead.

    A live drain logs progress every 20 batches and waits at most DuckDB's lock timeout
    (120 s) between batches."""
    return settings.stale_run_s()


def sensor_name(subject: str) -> str:
    return consumer_name(subject) + "_sensor"


def evaluate_inbox_tick(
    context: dg.SensorEvaluationContext, nats: NatsClient, subject: str
) -> dg.SensorResult | dg.SkipReason:
    """The decision of one tick, separate from the decorator so tests can call it directly."""
    active = context.instance.get_run_records(
        filters=dg.RunsFilter(
            job_name=inbox_job.name, statuses=IN_PROGRESS, tags={INBOX_SUBJECT_TAG: subject}
        ),
    )
    in_progress = None
    for record in active:
        run = record.dagster_run
        # A worker that died without a word (killed with the daemon, a reboot) leaves its run
        # STARTED for ever and this subject would never drain again. Its messages are
        # unacknowledged and come back after ack_wait; the next run takes them.
        why = fail_if_dead(
            context.instance,
            record,
            silent_after_s=stale_run_s(),
            then=f"a new {subject} run can drain",
        )
        if why is not None:
            context.log.warning(f"marked inbox run {run.run_id[:8]} failed: {why}")
            continue
        in_progress = f"run {run.run_id[:8]} for {subject} is {run.status.value.lower()}"
        break
    pending, unavailable = None, None
    if in_progress is None:
        try:
            pending = nats.pending_for(subject)
        except NatsUnavailableError as exc:
            unavailable = str(exc)
    decision = decide_inbox_tick(
        subject=subject,
        run_in_progress=in_progress,
        pending=pending,
        unavailable=unavailable,
        cursor=context.cursor,
        now=time.time(),
    )
    if decision.cursor is None:
        return dg.SkipReason(decision.reason)
    if not decision.request_run:
        return dg.SensorResult(skip_reason=dg.SkipReason(decision.reason), cursor=decision.cursor)
    return dg.SensorResult(
        run_requests=[dg.RunRequest(partition_key=subject, tags={INBOX_SUBJECT_TAG: subject})],
        cursor=decision.cursor,
    )


def build_inbox_sensor(subject: str) -> dg.SensorDefinition:
    @dg.sensor(
        name=sensor_name(subject),
        job=inbox_job,
        minimum_interval_seconds=sensor_interval_s(),
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Requests a {subject} inbox run when its NATS consumer has messages waiting.",
    )
    def _sensor(context: dg.SensorEvaluationContext, nats: NatsResource):
        return evaluate_inbox_tick(context, nats.client(), subject)

    return _sensor


inbox_sensors = [build_inbox_sensor(subject) for subject in SUBJECTS]

__all__ = ["build_inbox_sensor", "evaluate_inbox_tick", "inbox_sensors", "sensor_name"]
