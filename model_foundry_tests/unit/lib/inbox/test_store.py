"""The inbox store on real DuckDB files: the dedupe window, the move from the keyed layout,
and the error a failed batch raises."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import duckdb
import pytest

from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.inbox.dedupe_window import DEDUPE_WINDOW
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.storage import BatchWriter, connect, run_in_transaction
from model_foundry.lib.tables import registry

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def event(event_id: str, tool: str, occurred_at: datetime | None, seq: int) -> InboxEvent:
    body: dict[str, object] = {
        "event_id": event_id,
        "correlation_id": "sess",
        "payload": {"tool": tool, "arguments": {}},
    }
    if occurred_at is not None:
        body["occurred_at"] = occurred_at.isoformat()
    checked = validate_message(
        "llm.tool_call", json.dumps(body).encode(), seq, T0, T0 + timedelta(seconds=seq)
    )
    assert isinstance(checked, InboxEvent)
    return checked


def write(db_path: Path, *events: InboxEvent) -> tuple[int, int, int]:
    result = run_in_transaction(db_path, partial(write_batch, stream="S", events=events, dead=[]))
    return len(result.inserted_ids), result.duplicates, result.conflicts


def test_copies_within_the_window_are_one_event_and_copies_further_apart_are_two(
    db_path: Path,
) -> None:
    near = DEDUPE_WINDOW - timedelta(minutes=1)
    far = DEDUPE_WINDOW + timedelta(minutes=1)
    assert write(db_path, event("x", "grep", T0, 1)) == (1, 0, 0)
    # The same body again, however late: same occurred_at, so always a duplicate.
    assert write(db_path, event("x", "grep", T0, 2)) == (0, 1, 0)
    # Another body inside the window: a conflict; the first body stays.
    assert write(db_path, event("x", "sed", T0 + near, 3)) == (0, 0, 1)
    # Another body outside it: a second event with that id (the unique-id check shows it).
    assert write(db_path, event("x", "awk", T0 + far, 4)) == (1, 0, 0)
    # In one batch: a copy of a batch-mate, and a copy near only a copy that was itself old.
    assert write(
        db_path, event("y", "grep", T0, 5), event("y", "grep", T0, 6), event("x", "ls", T0, 7)
    ) == (1, 1, 1)
    # A copy whose only batch-mate within the window was itself a conflict with an older row
    # that is further than the window from it: a new event.
    assert write(db_path, event("w", "grep", T0, 9)) == (1, 0, 0)
    half = DEDUPE_WINDOW * 5 / 6
    assert write(
        db_path, event("w", "cp1", T0 + half, 10), event("w", "cp2", T0 + 2 * half, 11)
    ) == (1, 0, 1)
    # Without occurred_at the time JetStream stored the message stands in, so a redelivery
    # (same stream time) is a duplicate.
    assert write(db_path, event("z", "grep", None, 8)) == (1, 0, 0)
    assert write(db_path, event("z", "grep", None, 8)) == (0, 1, 0)
    with duckdb.connect(str(db_path), read_only=True) as con:
        tools = con.execute(
            "SELECT event_id, payload->>'tool' FROM pipeline_event_inbox ORDER BY stream_seq"
        ).fetchall()
        dead = con.execute(
            "SELECT stream_seq FROM pipeline_event_dead_letter ORDER BY 1"
        ).fetchall()
    assert tools == [
        ("x", "grep"),
        ("x", "awk"),
        ("y", "grep"),
        ("z", "grep"),
        ("w", "grep"),
        ("w", "cp2"),
    ]
    assert dead == [(3,), (7,), (10,)]


KEYED_DDL = (
    """
    CREATE TABLE pipeline_event_inbox (
        event_id VARCHAR PRIMARY KEY, subject VARCHAR NOT NULL, source_subject VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL, occurred_at TIMESTAMPTZ NOT NULL,
        received_at TIMESTAMPTZ NOT NULL, stream_seq BIGINT NOT NULL, payload JSON NOT NULL,
        body_sha256 VARCHAR NOT NULL, inserted_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
    """
    CREATE TABLE pipeline_event_dead_letter (
        stream VARCHAR NOT NULL, stream_seq BIGINT NOT NULL, subject VARCHAR NOT NULL,
        source_subject VARCHAR NOT NULL, event_id VARCHAR, reason VARCHAR NOT NULL,
        raw BLOB NOT NULL, raw_bytes BIGINT NOT NULL, received_at TIMESTAMPTZ NOT NULL,
        dead_lettered_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (stream, stream_seq)
    )
    """,
)


def test_a_file_with_the_keyed_layout_moves_once_and_keeps_every_row(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(db_path)) as con:
        for ddl in KEYED_DDL:
            con.execute(ddl)
        con.execute(
            "INSERT INTO pipeline_event_inbox (event_id, subject, source_subject, correlation_id, "
            "occurred_at, received_at, stream_seq, payload, body_sha256) "
            "SELECT 'old-' || i, 'llm.tool_call', 'llm.tool_call', 's', TIMESTAMPTZ '2025-01-01' "
            "+ to_seconds(i), now(), i, '{}', 'h' FROM range(1000) r(i)"
        )
        con.execute(
            "INSERT INTO pipeline_event_dead_letter (stream, stream_seq, subject, source_subject, "
            "reason, raw, raw_bytes, received_at) VALUES ('S', 1, 'a', 'a', 'bad', 'x', 1, now())"
        )
        con.execute("CREATE VIEW inbox_count AS SELECT count(*) AS n FROM pipeline_event_inbox")

    with connect(db_path) as con:  # the first connection that may write moves them
        assert registry.migrate(con) == []  # once

    with duckdb.connect(str(db_path), read_only=True) as con:
        keys = con.execute(
            "SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' "
            "AND table_name IN ('pipeline_event_inbox', 'pipeline_event_dead_letter')"
        ).fetchone()
        seqs = con.execute("SELECT stream_seq FROM pipeline_event_inbox").fetchall()
        dead = con.execute("SELECT stream_seq, published_at FROM pipeline_event_dead_letter")
        assert keys == (0,)
        # The row order, which the min-max index relies on, is kept.
        assert [r[0] for r in seqs] == list(range(1000))
        assert dead.fetchall() == [(1, None)]
        assert con.execute("SELECT n FROM inbox_count").fetchone() == (1000,)
    # The moved rows take part in the dedupe like new ones.
    copy = event("old-5", "grep", datetime(2025, 1, 1, 0, 0, 5, tzinfo=UTC), 2000)
    assert write(db_path, copy) == (0, 0, 1)


def test_a_batch_that_fails_raises_its_own_error_not_the_aborted_transaction(
    db_path: Path,
) -> None:
    # The review's OutOfMemoryException hid behind "Current transaction is aborted": the
    # cleanup after the failed insert ran SQL in the aborted transaction and raised anew.
    big = {"x": "y" * 5000}
    events = [
        validate_message(
            "llm.tool_call",
            json.dumps(
                {
                    "event_id": f"e{i}",
                    "correlation_id": "c",
                    "payload": {"tool": "t", "arguments": big},
                }
            ).encode(),
            i,
        )
        for i in range(2000)
    ]
    writer = BatchWriter(db_path, memory_limit="2MB")
    with pytest.raises(duckdb.OutOfMemoryException) as failed:
        writer.write(partial(write_batch, stream="S", events=events, dead=[]))
    assert "Current transaction is aborted" not in str(failed.value)
    # And the writer is usable again for the next batch.
    writer.memory_limit = "256MB"
    assert (
        len(writer.write(partial(write_batch, stream="S", events=events, dead=[])).inserted_ids)
        == 2000
    )
