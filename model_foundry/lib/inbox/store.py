"""The inbox and dead-letter tables: their DDL and the batch write the drain commits.

Arrow bulk insert, idempotent on event_id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from model_foundry.lib.events import DeadLetter, InboxEvent

INBOX_SCHEMA: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS pipeline_event_inbox (
        event_id VARCHAR PRIMARY KEY,
        subject VARCHAR NOT NULL,
        source_subject VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        received_at TIMESTAMPTZ NOT NULL,
        stream_seq BIGINT NOT NULL,
        payload JSON NOT NULL,
        body_sha256 VARCHAR NOT NULL,
        inserted_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
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
        PRIMARY KEY (stream, stream_seq)
    )
    """,
)


@dataclass
class BatchResult:
    """What one committed batch did."""

    inserted_ids: list[str] = field(default_factory=list)
    duplicates: int = 0
    conflicts: int = 0
    dead_lettered: int = 0


_INBOX_ARROW_SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("subject", pa.string()),
        ("source_subject", pa.string()),
        ("correlation_id", pa.string()),
        ("occurred_at", pa.timestamp("us", tz="UTC")),
        ("received_at", pa.timestamp("us", tz="UTC")),
        ("stream_seq", pa.int64()),
        ("payload", pa.string()),
        ("body_sha256", pa.string()),
    ]
)

_DEAD_ARROW_SCHEMA = pa.schema(
    [
        ("stream", pa.string()),
        ("stream_seq", pa.int64()),
        ("subject", pa.string()),
        ("source_subject", pa.string()),
        ("event_id", pa.string()),
        ("reason", pa.string()),
        ("raw", pa.binary()),
        ("raw_bytes", pa.int64()),
        ("received_at", pa.timestamp("us", tz="UTC")),
    ]
)


def _inbox_table(events: Sequence[InboxEvent]) -> pa.Table:
    return pa.Table.from_pydict(
        {
            "event_id": [e.event_id for e in events],
            "subject": [e.subject for e in events],
            "source_subject": [e.source_subject for e in events],
            "correlation_id": [e.correlation_id for e in events],
            "occurred_at": [e.occurred_at for e in events],
            "received_at": [e.received_at for e in events],
            "stream_seq": [e.stream_seq for e in events],
            "payload": [e.payload_json for e in events],
            "body_sha256": [e.body_sha256 for e in events],
        },
        schema=_INBOX_ARROW_SCHEMA,
    )


def _dead_table(stream: str, dead: Sequence[DeadLetter]) -> pa.Table:
    return pa.Table.from_pydict(
        {
            "stream": [stream] * len(dead),
            "stream_seq": [d.stream_seq for d in dead],
            "subject": [d.subject for d in dead],
            "source_subject": [d.source_subject for d in dead],
            "event_id": [d.event_id for d in dead],
            "reason": [d.reason for d in dead],
            "raw": [d.raw for d in dead],
            "raw_bytes": [len(d.raw) for d in dead],
            "received_at": [d.received_at for d in dead],
        },
        schema=_DEAD_ARROW_SCHEMA,
    )


def write_batch(
    con: duckdb.DuckDBPyConnection,
    stream: str,
    events: Sequence[InboxEvent],
    dead: Sequence[DeadLetter],
) -> BatchResult:
    """Insert one fetched batch; the caller owns the transaction.

    Idempotent on ``event_id`` (inbox) and on ``(stream, stream_seq)`` (dead letters), so a
    batch redelivered after a crash between commit and ack adds nothing. An ``event_id``
    already stored with a different body keeps the first body and is recorded as a dead
    letter, so the conflict is visible instead of silently dropped.
    """
    result = BatchResult()
    dead = list(dead)
    if events:
        # Insert the earliest copy of each id in the batch; later copies are duplicates (or
        # conflicts), found below. Deduplicating here spares DuckDB a window over the batch.
        first: dict[str, InboxEvent] = {}
        for e in sorted(events, key=lambda e: e.stream_seq):
            first.setdefault(e.event_id, e)
        staged = _inbox_table(list(first.values()))
        con.register("_staged_inbox", staged)
        try:
            rows = con.execute(
                """
                INSERT INTO pipeline_event_inbox BY NAME
                SELECT * FROM _staged_inbox
                ON CONFLICT (event_id) DO NOTHING
                RETURNING event_id, stream_seq
                """
            ).fetchall()
        finally:
            con.unregister("_staged_inbox")
        result.inserted_ids = [r[0] for r in rows]
        inserted_seqs = {r[1] for r in rows}
        # Only the rows that were not inserted can conflict; in steady state there are none,
        # so the common path never looks up the (large) inbox table.
        others = [e for e in events if e.stream_seq not in inserted_seqs]
        if others:
            placeholders = ",".join("?" * len({e.event_id for e in others}))
            ids = list(dict.fromkeys(e.event_id for e in others))
            stored = {
                row[0]: (row[1], row[2])
                for row in con.execute(
                    "SELECT event_id, body_sha256, stream_seq FROM pipeline_event_inbox "
                    f"WHERE event_id IN ({placeholders})",
                    ids,
                ).fetchall()
            }
            for e in others:
                first_sha, first_seq = stored[e.event_id]
                if e.body_sha256 == first_sha or e.stream_seq == first_seq:
                    result.duplicates += 1
                    continue
                result.conflicts += 1
                dead.append(
                    DeadLetter(
                        subject=e.subject,
                        source_subject=e.source_subject,
                        stream_seq=e.stream_seq,
                        received_at=e.received_at,
                        reason=(
                            f"duplicate event_id {e.event_id!r} with a different body; "
                            f"the first one (stream_seq {first_seq}) is kept"
                        ),
                        raw=e.raw,
                        event_id=e.event_id,
                    )
                )
    if dead:
        staged_dead = _dead_table(stream, dead)
        con.register("_staged_dead", staged_dead)
        try:
            con.execute(
                """
                INSERT INTO pipeline_event_dead_letter BY NAME
                SELECT * FROM _staged_dead
                ON CONFLICT (stream, stream_seq) DO NOTHING
                """
            )
        finally:
            con.unregister("_staged_dead")
        result.dead_lettered = len(dead)
    return result


__all__ = ["INBOX_SCHEMA", "BatchResult", "write_batch"]
