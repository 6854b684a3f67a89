"""``pipeline_event_inbox`` and ``pipeline_event_dead_letter``: what the drain stores.

Neither has a PRIMARY KEY: a key's index grows with the table and is held in memory (see
``lib/inbox/store.py`` for the measurements and how a batch is kept exactly once without one).

``commit_seq`` numbers the writer's commits in commit order (every row of one batch carries
its commit's number; rows stored before the column existed carry 0). Downstream steps read
``commit_seq > their position`` (``lib/tables/positions.py``); rows are appended in commit
order, so DuckDB's min-max index reads only the tail's row groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table


@dataclass(frozen=True)
class InboxRow:
    """One stored event. ``payload`` is the event's payload as JSON text."""

    event_id: str
    subject: str
    source_subject: str
    correlation_id: str
    occurred_at: datetime
    received_at: datetime
    stream_seq: int
    payload: str
    body_sha256: str
    inserted_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)
    published_at: datetime | None = None
    # The writer's commit number, set in SQL inside its transaction (lib/inbox/store.py).
    commit_seq: int = 0


@dataclass(frozen=True)
class DeadLetterRow:
    """One message that could not be stored as an event, with its raw bytes and why."""

    stream: str
    stream_seq: int
    subject: str
    source_subject: str
    event_id: str | None
    reason: str
    raw: bytes
    raw_bytes: int
    received_at: datetime
    dead_lettered_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)
    published_at: datetime | None = None


PIPELINE_EVENT_INBOX: Table[InboxRow] = Table(
    "pipeline_event_inbox",
    InboxRow,
    """
    CREATE TABLE IF NOT EXISTS pipeline_event_inbox (
        event_id VARCHAR NOT NULL,
        subject VARCHAR NOT NULL,
        source_subject VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        received_at TIMESTAMPTZ NOT NULL,
        stream_seq BIGINT NOT NULL,
        payload JSON NOT NULL,
        body_sha256 VARCHAR NOT NULL,
        inserted_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        published_at TIMESTAMPTZ,
        commit_seq BIGINT NOT NULL
    )
    """,
)

# A message is its stream, its sequence and the time the stream stored it: a stream deleted
# and created again (`make clean` keeps the DuckDB file) numbers its messages from 1 again.
PIPELINE_EVENT_DEAD_LETTER: Table[DeadLetterRow] = Table(
    "pipeline_event_dead_letter",
    DeadLetterRow,
    """
    CREATE TABLE IF NOT EXISTS pipeline_event_dead_letter (
        stream VARCHAR NOT NULL,
        stream_seq BIGINT NOT NULL,
        subject VARCHAR NOT NULL,
        source_subject VARCHAR NOT NULL,
        event_id VARCHAR,
        reason VARCHAR NOT NULL,
        raw BLOB NOT NULL,
        raw_bytes BIGINT NOT NULL,
        received_at TIMESTAMPTZ NOT NULL,
        dead_lettered_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        published_at TIMESTAMPTZ
    )
    """,
)

__all__ = ["PIPELINE_EVENT_DEAD_LETTER", "PIPELINE_EVENT_INBOX", "DeadLetterRow", "InboxRow"]
