"""The inbox asset against a real nats-server, real DuckDB files and a real Dagster instance."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

from model_foundry.defs.inbox.assets import pipeline_event_inbox_record
from model_foundry.defs.inbox.checks import inbox_checks
from model_foundry.defs.resources import FoundryDuckDB, NatsResource
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib.inbox.drain import COMMIT_DEPTH, InboxRecord
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, publish
from model_foundry_tests.pipeline_helpers import wait_for

RECORD_KEYS = set(InboxRecord(subject="x").as_dict())


def materialize(
    res: NatsClient, db_path: Path, subject: str, instance: dg.DagsterInstance | None = None
) -> dg.ExecuteInProcessResult:
    if instance is None:
        with quiet_instance() as own:
            return materialize(res, db_path, subject, own)
    return dg.materialize(
        [pipeline_event_inbox_record, *inbox_checks],
        partition_key=subject,
        resources={"nats": NatsResource.of(res), "duckdb": FoundryDuckDB(database=str(db_path))},
        instance=instance,
        run_config={"ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3}}}},
    )


def rows(db_path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def consumer_counts(res: NatsClient, subject: str) -> tuple[int, int]:
    pending = res.pending_for(subject)
    return pending.num_pending, pending.num_ack_pending


CRASH_SCRIPT = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from model_foundry.lib.inbox.drain import drain_subject
    from model_foundry.lib.nats.connection import NatsClient

    def die(msgs):
        print(f"committed {len(msgs)}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    res = NatsClient(servers=sys.argv[1], ack_wait_s=2.0)
    asyncio.run(drain_subject(res, sys.argv[2], sys.argv[3], batch_size=25, after_commit=die))
    """
)


@BOTH_NATS_LINES
def test_kill_after_commit_before_ack_loses_and_duplicates_nothing(
    nats_client: NatsClient, db_path: Path, tmp_path: Path
) -> None:
    events = [e for e in sample_events(200, sessions=4) if e.subject == "llm.chat.persist"]
    publish(nats_client, events)
    script = tmp_path / "crash.py"
    script.write_text(CRASH_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script), nats_client.servers, str(db_path), "llm.chat.persist"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "committed 25" in proc.stdout
    # The first batch is in DuckDB but was never acknowledged, and so is any batch queued
    # behind it whose commit had started before the kill.
    at_kill = rows(db_path, "SELECT count(*) FROM pipeline_event_inbox")[0][0]
    assert at_kill % 25 == 0 and 25 <= at_kill <= 25 * COMMIT_DEPTH
    assert consumer_counts(nats_client, "llm.chat.persist")[1] > 0

    # After ack_wait JetStream redelivers the unacknowledged batch to a later drain.
    records = []

    def redelivered() -> bool:
        result = materialize(nats_client, db_path, "llm.chat.persist")
        records.append(result.output_for_node("pipeline_event_inbox_record"))
        return sum(r["duplicates"] for r in records) >= at_kill

    wait_for(redelivered, timeout_s=30, what="the unacknowledged batches to come back")
    assert sum(r["duplicates"] for r in records) == at_kill
    assert sum(r["inserted"] for r in records) == len(events) - at_kill
    stored = rows(db_path, "SELECT count(*), count(DISTINCT event_id) FROM pipeline_event_inbox")
    assert stored == [(len(events), len(events))]
    assert consumer_counts(nats_client, "llm.chat.persist") == (0, 0)
