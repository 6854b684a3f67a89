"""The inbox asset against a real nats-server, real DuckDB files and a real Dagster instance:
the system tests."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib.inbox.drain import COMMIT_DEPTH
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, publish
from model_foundry_tests.pipeline_helpers import wait_for
from model_foundry_tests.shared.defs.inbox.assets import (
    CRASH_SCRIPT,
    consumer_counts,
    materialize,
    rows,
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
