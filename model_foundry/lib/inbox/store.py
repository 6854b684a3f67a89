"""Batch writes to the inbox and dead-letter tables (their shape: ``lib/tables/inbox.py``).

Why the inbox has no PRIMARY KEY: DuckDB holds a key's ART index in memory once a write
touches it, and random event ids (uuid4, what publishers send) touch nearly all of it with
the first batch. The index grows with the table, every batch gets slower with it, and under
the drain's memory cap batches fail with an OutOfMemoryException once the table holds some
hundred thousand rows (docs/benchmarks.md has the figures).

Instead, a batch is checked against the stored rows whose ``occurred_at`` lies within the
duplicate-check window of its events (``lib/inbox/dedupe_window.py``). The inbox is appended
in roughly ``occurred_at`` order, so DuckDB's min-max index skips every other row group: the
check reads about one row group whether the table holds ten thousand rows or ten million. A
copy of an event carries the same ``occurred_at`` as the original (publishers re-send the
same body; an event without one gets the time JetStream stored it, the same on every
redelivery), so every redelivery and every re-sent copy is found, however late it comes. Two
*different* bodies with one ``event_id`` whose ``occurred_at`` lie more than the window
apart are both stored; the ``inbox_event_ids_unique`` check then fails and shows them.

Only one process can write a DuckDB file at a time and the drain writes from one thread, so
each batch's check sees every earlier batch.

Each batch that stores events takes the next commit number in its own transaction and stamps
it on its rows as ``commit_seq``: downstream steps read the inbox by that position
(``lib/tables/positions.py`` says why numbers follow commit order). The new events are
appended by ``lib/inbox/append.py``, the copies of stored ones settled by
``lib/inbox/copies.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter

import duckdb

from model_foundry.lib.events import DeadLetter, InboxEvent
from model_foundry.lib.inbox.append import (
    CommitSeq,
    StagedCluster,
    append_new,
    stage_clusters,
    unregister_quietly,
)
from model_foundry.lib.inbox.arrow_rows import dead_table
from model_foundry.lib.inbox.copies import settle_copies, split_batch
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_DEAD_LETTER

DEAD_LETTER = PIPELINE_EVENT_DEAD_LETTER.name

_stream_seq = attrgetter("stream_seq")


@dataclass
class BatchResult:
    """What one committed batch did."""

    inserted_ids: list[str] = field(default_factory=list)
    duplicates: int = 0
    conflicts: int = 0
    dead_lettered: int = 0
    # The commit numbers its transactions took (none for duplicates and dead letters only).
    commit_seqs: list[int] = field(default_factory=list)

    def add(self, other: BatchResult) -> None:
        self.inserted_ids.extend(other.inserted_ids)
        self.commit_seqs.extend(other.commit_seqs)
        self.duplicates += other.duplicates
        self.conflicts += other.conflicts
        self.dead_lettered += other.dead_lettered


@dataclass(frozen=True)
class StagedBatch:
    """A batch made ready for its transaction without the database: split into first
    copies and later copies of an id, grouped by time and turned into Arrow tables. The
    drain stages a batch on its event loop, so the writer's thread, which competes with the
    event loop for the GIL, runs little more than DuckDB's own statements."""

    first: list[InboxEvent]
    copies: list[InboxEvent]
    staged: list[StagedCluster]
    dead: list[DeadLetter]


def stage_batch(events: Sequence[InboxEvent], dead: Sequence[DeadLetter]) -> StagedBatch:
    first, copies = split_batch(events) if events else ([], [])
    return StagedBatch(first, copies, stage_clusters(first), list(dead))


def write_staged(con: duckdb.DuckDBPyConnection, stream: str, batch: StagedBatch) -> BatchResult:
    """Insert one staged batch; the caller owns the transaction (see :func:`write_batch`)."""
    result = BatchResult()
    dead = list(batch.dead)
    seq = CommitSeq()
    if batch.first:
        skipped = append_new(con, batch.staged, seq)
        result.inserted_ids = [e.event_id for e in batch.first if e.stream_seq not in skipped]
        copies = batch.copies + [e for e in batch.first if e.stream_seq in skipped]
        if copies:
            # Rare (redeliveries, re-sends): only now is the inbox read for their bodies.
            settled = settle_copies(con, sorted(copies, key=_stream_seq), seq)
            result.inserted_ids += settled.inserted_ids
            result.duplicates += settled.duplicates
            result.conflicts += len(settled.conflicts)
            dead += settled.conflicts
    if dead:
        _insert_dead_letters(con, stream, dead)
        result.dead_lettered = len(dead)
    if seq.value is not None:
        result.commit_seqs.append(seq.value)
    return result


def write_batch(
    con: duckdb.DuckDBPyConnection,
    stream: str,
    events: Sequence[InboxEvent],
    dead: Sequence[DeadLetter],
) -> BatchResult:
    """Insert one fetched batch; the caller owns the transaction.

    A copy of an event already stored (same ``event_id``, ``occurred_at`` within the window)
    is a duplicate when its body is the same and a conflict otherwise: the first body stays
    and the other becomes a dead letter, visible instead of dropped. A dead letter already
    stored for the same message is not stored again, so a batch redelivered after a crash
    between commit and ack adds nothing.
    """
    return write_staged(con, stream, stage_batch(events, dead))


def _insert_dead_letters(
    con: duckdb.DuckDBPyConnection, stream: str, dead: Sequence[DeadLetter]
) -> None:
    seqs = [d.stream_seq for d in dead]
    con.register("_staged_dead", dead_table(stream, dead))
    try:
        con.execute(
            f"""
            INSERT INTO {DEAD_LETTER} BY NAME
            SELECT * FROM _staged_dead s
            WHERE NOT EXISTS (
                SELECT 1 FROM {DEAD_LETTER} d
                WHERE d.stream_seq BETWEEN ? AND ?
                  AND d.stream = s.stream AND d.stream_seq = s.stream_seq
                  AND d.published_at IS NOT DISTINCT FROM s.published_at
            )
            """,
            [min(seqs), max(seqs)],
        )
    finally:
        unregister_quietly(con, "_staged_dead")


__all__ = [
    "DEAD_LETTER",
    "BatchResult",
    "StagedBatch",
    "stage_batch",
    "write_batch",
    "write_staged",
]
