"""Sensor ticks against a real nats-server and a real (test) Dagster instance."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import dagster as dg
import pytest

from model_foundry.defs.inbox.assets import INBOX_SUBJECT_TAG, pipeline_event_inbox_record
from model_foundry.defs.inbox.jobs import inbox_job
from model_foundry.defs.inbox.sensors import build_inbox_sensor
from model_foundry.defs.resources import FoundryDuckDB, NatsResource
from model_foundry.defs.run_health.dead_runs import WORKER_TAG, record_worker, worker_of
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import make_event
from model_foundry.lib.run_worker import RunWorker
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, publish
from model_foundry_tests.pipeline_helpers import wait_for


def tick(subject: str, instance: dg.DagsterInstance, res: NatsClient, cursor: str | None = None):
    sensor = build_inbox_sensor(subject)
    # The definitions let Dagster resolve the partition key against the inbox asset, as the
    # daemon does against the code location.
    definitions = dg.Definitions(
        assets=[pipeline_event_inbox_record],
        jobs=[inbox_job],
        sensors=[sensor],
        resources={"nats": NatsResource.of(res), "duckdb": FoundryDuckDB(database=":memory:")},
    )
    context = dg.build_sensor_context(
        instance=instance,
        resources={"nats": NatsResource.of(res)},
        cursor=cursor,
        definitions=definitions,
    )
    return sensor.evaluate_tick(context)


def add_started_run(
    instance: dg.DagsterInstance,
    *,
    job_name: str = inbox_job.name,
    subject: str | None = None,
    worker_pid: int | None = None,
) -> str:
    """A run the instance believes is STARTED, as a run killed with the daemon is left."""
    tags = {INBOX_SUBJECT_TAG: subject} if subject is not None else {}
    run_id = str(uuid.uuid4())
    instance.add_run(
        dg.DagsterRun(
            job_name=job_name, run_id=run_id, status=dg.DagsterRunStatus.STARTED, tags=tags
        )
    )
    if worker_pid is not None:
        record_worker(instance, run_id, worker_pid)
    return run_id


def dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


@BOTH_NATS_LINES
def test_pending_messages_request_a_run_for_that_partition_without_consuming(
    nats_client: NatsClient,
) -> None:
    # Under the new and the legacy name: on NATS 2.9 the partition has a consumer for each.
    publish(
        nats_client,
        [
            make_event(name, {"tool": "grep", "arguments": {}}, "s", event_id=f"{name}-{i}")
            for i in range(3)
            for name in ("llm.tool_call", "knowledge.tool_call")
        ],
    )
    with quiet_instance() as instance:
        result = tick("llm.tool_call", instance, nats_client)
        other = tick("llm.chat.persist", instance, nats_client)
    assert len(result.run_requests) == 1
    request = result.run_requests[0]
    assert request.partition_key == "llm.tool_call"
    assert request.tags[INBOX_SUBJECT_TAG] == "llm.tool_call"
    assert other.run_requests == []
    # The tick only read counts: all six messages are still waiting, none delivered.
    pending = nats_client.pending_for("llm.tool_call")
    assert (pending.num_pending, pending.num_ack_pending) == (6, 0)


def test_running_run_for_the_subject_prevents_a_second_request(
    nats_client: NatsClient,
) -> None:
    publish(
        nats_client,
        [
            make_event("llm.flow.lineage", {"kind": "node", "node_id": "n"}, "s", event_id="f1"),
            make_event("llm.tool_call", {"tool": "grep", "arguments": {}}, "s", event_id="t1"),
        ],
    )
    with quiet_instance() as instance:
        add_started_run(instance, subject="llm.flow.lineage")
        blocked = tick("llm.flow.lineage", instance, nats_client)
        assert blocked.run_requests == []
        assert "started" in (blocked.skip_message or "")
        # A queued run of one subject does not hold back the others.
        other = tick("llm.tool_call", instance, nats_client)
        assert [r.partition_key for r in other.run_requests] == ["llm.tool_call"]
    with quiet_instance() as fresh:
        assert len(tick("llm.flow.lineage", fresh, nats_client).run_requests) == 1


def test_unreachable_nats_skips_with_the_url() -> None:
    from model_foundry.devtools.ports import free_port

    url = f"nats://127.0.0.1:{free_port()}"
    with quiet_instance() as instance:
        result = tick("llm.tool_call", instance, NatsClient(servers=url, connect_timeout_s=0.5))
    assert result.run_requests == []
    assert url in (result.skip_message or "")


def test_a_started_run_whose_worker_died_is_failed_and_replaced(
    nats_client: NatsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run killed with the daemon stays STARTED for ever under the default run launcher;
    # without this, its subject would never be drained again.
    publish(
        nats_client,
        [make_event("llm.tool_call", {"tool": "grep", "arguments": {}}, "s", event_id="t1")],
    )
    monkeypatch.setenv("MODEL_FOUNDRY_STALE_RUN_S", "3")
    with quiet_instance() as instance:
        run_id = add_started_run(instance, subject="llm.tool_call")
        fresh = tick("llm.tool_call", instance, nats_client)
        assert fresh.run_requests == []  # silent for less than the threshold: still alive
        # Ticks until the silence passes the threshold, as the daemon's would.
        result = wait_for(
            lambda: tick("llm.tool_call", instance, nats_client).run_requests,
            timeout_s=30,
            what="the silent run to count as dead",
        )
        assert [r.partition_key for r in result] == ["llm.tool_call"]
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.FAILURE


def test_a_run_whose_worker_process_is_gone_is_failed_at_once(
    nats_client: NatsClient,
) -> None:
    publish(
        nats_client,
        [make_event("llm.tool_call", {"tool": "grep", "arguments": {}}, "s", event_id="t1")],
    )
    with quiet_instance() as instance:
        # This test's own Python process stands for a live worker.
        alive = add_started_run(instance, subject="llm.tool_call", worker_pid=os.getpid())
        assert tick("llm.tool_call", instance, nats_client).run_requests == []
        instance.report_run_canceled(instance.get_run_by_id(alive))

        dead = add_started_run(instance, subject="llm.tool_call", worker_pid=dead_pid())
        result = tick("llm.tool_call", instance, nats_client)
        assert [r.partition_key for r in result.run_requests] == ["llm.tool_call"]
        assert instance.get_run_by_id(dead).status == dg.DagsterRunStatus.FAILURE


def test_inbox_runs_record_their_worker_for_the_sensor(
    nats_client: NatsClient, tmp_path: Path
) -> None:
    with quiet_instance() as instance:
        result = dg.materialize(
            [pipeline_event_inbox_record],
            partition_key="llm.tool_call",
            resources={
                "nats": NatsResource.of(nats_client),
                "duckdb": FoundryDuckDB(database=str(tmp_path / "db.duckdb")),
            },
            instance=instance,
            run_config={
                "ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.2}}}
            },
        )
        run = instance.get_run_by_id(result.run_id)
    # What tells this process from a later one given the same pid, or one from another boot.
    assert worker_of(run) == RunWorker.of(result.run_id, os.getpid())
    assert worker_of(run).start_ticks is not None and worker_of(run).boot_id is not None
    # One record, under Dagster's hidden prefix: the run's own tags stay what the runs list shows.
    assert [k for k in run.tags if "worker" in k] == [WORKER_TAG]


def test_dead_run_sensor_fails_any_started_run_whose_worker_is_gone() -> None:
    # Downstream runs too: automation never updates an asset whose run stays "in progress".
    from model_foundry.defs.run_health.sensors import stale_run_sensor

    with quiet_instance() as instance:
        ids = {
            name: add_started_run(instance, job_name="__ASSET_JOB", worker_pid=pid)
            for name, pid in (("dead", dead_pid()), ("alive", os.getpid()), ("untagged", None))
        }
        result = stale_run_sensor.evaluate_tick(dg.build_sensor_context(instance=instance))
        assert ids["dead"] in (result.skip_message or "")
        status = {n: instance.get_run_by_id(i).status for n, i in ids.items()}
    assert status == {
        "dead": dg.DagsterRunStatus.FAILURE,
        "alive": dg.DagsterRunStatus.STARTED,
        "untagged": dg.DagsterRunStatus.STARTED,
    }
