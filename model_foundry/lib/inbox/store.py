"""Batch writes to the inbox and dead-letter tables (their shape: ``lib/tables/inbox.py``).

Why the inbox has no PRIMARY KEY: DuckDB holds a key's ART index in memory once a write
touches it, and random event ids (uuid4, what publishers send) touch nearly all of it with
the first batch. Measured on DuckDB 2.0.1 with 1000-event batches and random ids, the index
alone took 106 MB at 1M rows, 189 MB at 2M and 349 MB at 5M, a batch took 0.12 s, 0.30 s and
0.60 s, and under the drain's 64 MB cap every batch failed with an OutOfMemoryException from
about 700k rows on (docs/events-at-scale.md has the figures).

Instead, a batch is checked against the stored rows whose ``occurred_at`` lies within
:data:`DEDUPE_WINDOW` of its events. The inbox is appended in roughly ``occurred_at`` order,
so DuckDB's min-max index skips every other row group: the check reads about one row group
whether the table holds ten thousand rows or ten million. A copy of an event carries the
same ``occurred_at`` as the original (publishers re-send the same body; an event without one
gets the time JetStream stored it, the same on every redelivery), so every redelivery and
every re-sent copy is found, however late it comes. Two *different* bodies with one
``event_id`` whose ``occurred_at`` lie more than the window apart are both stored; the
``inbox_event_ids_unique`` check then fails and shows them.

Only one process can write a DuckDB file at a time and the drain writes from one thread, so
each batch's check sees every earlier batch.

Each batch that stores events takes the next commit number in its own transaction and stamps
it on its rows as ``commit_seq``: downstream steps read the inbox by that position
(``lib/tables/positions.py`` says why numbers follow commit order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from operator import attrgetter

import duckdb
import pyarrow as pa

from model_foundry.lib.events import DeadLetter, InboxEvent
from model_foundry.lib.inbox.positions import next_commit_seq
from model_foundry.lib.tables.base import fetch
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_DEAD_LETTER, PIPELINE_EVENT_INBOX

# pyarrow imports pandas the first time it builds an array (pyarrow 26, `_is_pandas_object`):
# about half a second. Done here, at import, it is not paid inside the first batch's
# transaction, where it would hold the DuckDB file.
pa.array([0], pa.int64())

INBOX = PIPELINE_EVENT_INBOX.name
DEAD_LETTER = PIPELINE_EVENT_DEAD_LETTER.name

# Copies of one event_id whose occurred_at are this close are one event.
DEDUPE_WINDOW = timedelta(hours=1)
# A batch's check names at most this many occurred_at ranges; past it, the closest merge.
MAX_LOOKUP_RANGES = 16


@dataclass
class BatchResult:
    """What one committed batch did."""

    inserted_ids: list[str] = field(default_factory=list)
    duplicates: int = 0
    conflicts: int = 0
    dead_lettered: int = 0

    def add(self, other: BatchResult) -> None:
        self.inserted_ids.extend(other.inserted_ids)
        self.duplicates += other.duplicates
        self.conflicts += other.conflicts
        self.dead_lettered += other.dead_lettered


# Where each inbox column comes from, column by column: the drain's hot path builds each
# Arrow column with one C-level map over the batch, never a row object per event.
_INBOX_SOURCES: dict[str, Callable[[InboxEvent], object]] = {
    "event_id": attrgetter("event_id"),
    "subject": attrgetter("subject"),
    "source_subject": attrgetter("source_subject"),
    "correlation_id": attrgetter("correlation_id"),
    "occurred_at": attrgetter("occurred_at"),
    "received_at": attrgetter("received_at"),
    "stream_seq": attrgetter("stream_seq"),
    "payload": attrgetter("payload_json"),
    "body_sha256": attrgetter("body_sha256"),
    "published_at": attrgetter("published_at"),
    # Known only inside the transaction: the append replaces it with the commit's number.
    "commit_seq": lambda _e: 0,
}
# The dead-letter columns but ``stream``, which is the batch's.
_DEAD_SOURCES: dict[str, Callable[[DeadLetter], object]] = {
    "stream_seq": attrgetter("stream_seq"),
    "subject": attrgetter("subject"),
    "source_subject": attrgetter("source_subject"),
    "event_id": attrgetter("event_id"),
    "reason": attrgetter("reason"),
    "raw": attrgetter("raw"),
    "raw_bytes": lambda d: len(d.raw),
    "received_at": attrgetter("received_at"),
    "published_at": attrgetter("published_at"),
}
# ``payload`` is staged as Arrow's JSON extension type: the drain made the text with
# orjson.dumps, so it is valid JSON, and DuckDB takes an ``arrow.json`` column into its JSON
# column as it is, where a plain string column is parsed again to be cast (about a third of
# the insert's time on the 1 KB sample events).
_INBOX_ARROW_SCHEMA = PIPELINE_EVENT_INBOX.arrow_schema
_INBOX_ARROW_SCHEMA = _INBOX_ARROW_SCHEMA.set(
    _INBOX_ARROW_SCHEMA.get_field_index("payload"), pa.field("payload", pa.json_())
)
_DEAD_ARROW_SCHEMA = PIPELINE_EVENT_DEAD_LETTER.arrow_schema


_RECEIVED_AT_TYPE = _INBOX_ARROW_SCHEMA.field("received_at").type


def _column(name: str, events: Sequence[InboxEvent]) -> list[object] | pa.Array:
    values = list(map(_INBOX_SOURCES[name], events))
    if name == "received_at" and values and all(v is values[0] for v in values):
        # The drain gives a whole batch one received_at: one scalar repeated, instead of
        # a time zone lookup per event (about a fifth of building the batch's table).
        return pa.repeat(pa.scalar(values[0], _RECEIVED_AT_TYPE), len(values))
    return values


def _inbox_table(events: Sequence[InboxEvent]) -> pa.Table:
    return pa.Table.from_pydict(
        {name: _column(name, events) for name in _INBOX_SOURCES}, schema=_INBOX_ARROW_SCHEMA
    )


def _dead_table(stream: str, dead: Sequence[DeadLetter]) -> pa.Table:
    columns = {name: list(map(get, dead)) for name, get in _DEAD_SOURCES.items()}
    return pa.Table.from_pydict(
        {"stream": [stream] * len(dead), **columns}, schema=_DEAD_ARROW_SCHEMA
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_WINDOW_US = DEDUPE_WINDOW // _MICROSECOND


def _micros(t: datetime) -> int:
    return (t - _EPOCH) // _MICROSECOND


_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)


def _widened(t: datetime) -> tuple[datetime, datetime]:
    """``t`` +- the window, kept inside Python's calendar (events may claim year 1 or 9999)."""
    low = t - DEDUPE_WINDOW if t - _FIRST > DEDUPE_WINDOW else _FIRST
    high = t + DEDUPE_WINDOW if _LAST - t > DEDUPE_WINDOW else _LAST
    return low, high


_TWICE_WINDOW = 2 * DEDUPE_WINDOW
_occurred_at = attrgetter("occurred_at")
_stream_seq = attrgetter("stream_seq")


@dataclass
class Cluster:
    """Events of a batch whose check reads one ``occurred_at`` range of the inbox."""

    low: datetime
    high: datetime
    events: list[InboxEvent] = field(default_factory=list)


def clusters(events: Sequence[InboxEvent]) -> list[Cluster]:
    """The batch split by time: each event's time widened by the window, overlapping ranges
    merged, at most :data:`MAX_LOOKUP_RANGES` (the closest merge first). A batch of events
    published together is one cluster, so one statement."""
    found: list[Cluster] = []
    last = _FIRST
    # Sorted by time, two neighbours' widened ranges overlap exactly when they lie at most
    # twice the window apart (at the calendar's edges the clipped ranges overlap too), and
    # a cluster ends where its latest event's range does; so _widened, the costly part of
    # this loop, runs once per cluster, not once per event.
    for e in sorted(events, key=_occurred_at):
        t = e.occurred_at
        if found and t - last <= _TWICE_WINDOW:
            found[-1].events.append(e)
        else:
            if found:
                found[-1].high = _widened(last)[1]
            found.append(Cluster(_widened(t)[0], _LAST, [e]))
        last = t
    if found:
        found[-1].high = _widened(last)[1]
    while len(found) > MAX_LOOKUP_RANGES:
        gaps = [found[i + 1].low - found[i].high for i in range(len(found) - 1)]
        i = gaps.index(min(gaps))
        first, second = found[i], found[i + 1]
        found[i : i + 2] = [Cluster(first.low, second.high, first.events + second.events)]
    return found


@dataclass(frozen=True)
class _Copy:
    """A stored copy of an event_id. Times are compared in microseconds: DuckDB hands a time
    near year 9999 back as text when the session's time zone moves it past the calendar."""

    event_id: str
    occurred_us: int
    body_sha256: str
    stream_seq: int

    def near(self, e: InboxEvent) -> bool:
        return abs(self.occurred_us - _micros(e.occurred_at)) <= _WINDOW_US


def _unregister_quietly(con: duckdb.DuckDBPyConnection, name: str) -> None:
    # After a failed statement the transaction is aborted and every later call, unregister
    # included, raises "Current transaction is aborted": that must not replace the error
    # that aborted it. Closing the connection drops the registration anyway.
    with suppress(duckdb.Error):
        con.unregister(name)


def _split_batch(events: Sequence[InboxEvent]) -> tuple[list[InboxEvent], list[InboxEvent]]:
    """The batch's first copies, and its later copies of an id (within the window)."""
    ordered = sorted(events, key=_stream_seq)
    if len({e.event_id for e in ordered}) == len(ordered):
        return ordered, []  # the usual batch: no id twice, nothing to compare
    first: list[InboxEvent] = []
    later: list[InboxEvent] = []
    seen: dict[str, list[datetime]] = {}
    for e in ordered:
        times = seen.setdefault(e.event_id, [])
        if any(abs(t - e.occurred_at) <= DEDUPE_WINDOW for t in times):
            later.append(e)
        else:
            times.append(e.occurred_at)
            first.append(e)
    return first, later


# The stored rows under a cluster's ids in its range. A constant range lets DuckDB skip every
# row group whose min-max index lies outside it; times come back as microseconds (see _Copy).
# Finding the copies first and then appending the rest with a plain INSERT costs less than
# one INSERT ... WHERE NOT EXISTS, which DuckDB runs as a correlated (delim) join (measured
# with DuckDB 2.0.1 on 1000-event batches: 5.3 ms against 7.5 ms into a 400k-row inbox).
_FIND_STORED = f"""
SELECT i.event_id, epoch_us(i.occurred_at) FROM {INBOX} i
WHERE i.occurred_at BETWEEN ? AND ?
  AND i.event_id IN (SELECT event_id FROM _staged_inbox)
"""
_APPEND_STAGED = (
    f"INSERT INTO {INBOX} BY NAME SELECT * REPLACE (?::BIGINT AS commit_seq) FROM _staged_inbox"
)


def _has_near_copy(e: InboxEvent, stored: dict[str, list[int]]) -> bool:
    """Whether a stored copy of ``e``'s id (times in microseconds) lies within the window."""
    times = stored.get(e.event_id)
    if not times:
        return False
    at = _micros(e.occurred_at)
    return any(abs(us - at) <= _WINDOW_US for us in times)


@dataclass
class _CommitSeq:
    """The transaction's commit number, taken from the counter on the first insert only: a
    batch of nothing but duplicates or dead letters takes none."""

    value: int | None = None

    def take(self, con: duckdb.DuckDBPyConnection) -> int:
        if self.value is None:
            self.value = next_commit_seq(con)
        return self.value


@dataclass(frozen=True)
class _StagedCluster:
    cluster: Cluster
    table: pa.Table


def _stage(events: Sequence[InboxEvent]) -> list[_StagedCluster]:
    return [_StagedCluster(c, _inbox_table(c.events)) for c in clusters(events)]


def _append_new(
    con: duckdb.DuckDBPyConnection, staged: Sequence[_StagedCluster], seq: _CommitSeq
) -> set[int]:
    """Append each cluster's events that no stored row within the window already has, under
    the transaction's commit number; returns the stream_seqs of those it left out."""
    skipped: set[int] = set()
    for s in staged:
        events = s.cluster.events
        con.register("_staged_inbox", s.table)
        try:
            new = events
            stored = con.execute(_FIND_STORED, [s.cluster.low, s.cluster.high]).fetchall()
            if stored:
                near: dict[str, list[int]] = {}
                for event_id, occurred_us in stored:
                    near.setdefault(event_id, []).append(occurred_us)
                keep = [not _has_near_copy(e, near) for e in events]
                new = [e for e, k in zip(events, keep, strict=True) if k]
                skipped.update(e.stream_seq for e, k in zip(events, keep, strict=True) if not k)
                if len(new) < len(events):
                    con.unregister("_staged_inbox")
                    con.register("_staged_inbox", s.table.filter(pa.array(keep)))
            if new:
                con.execute(_APPEND_STAGED, [seq.take(con)])
        finally:
            _unregister_quietly(con, "_staged_inbox")
    return skipped


def _insert_new(
    con: duckdb.DuckDBPyConnection, events: Sequence[InboxEvent], seq: _CommitSeq
) -> set[int]:
    """Insert the events no stored row within the window already has; their stream_seqs."""
    skipped = _append_new(con, _stage(events), seq)
    return {e.stream_seq for e in events if e.stream_seq not in skipped}


def _stored_copies(
    con: duckdb.DuckDBPyConnection, events: Sequence[InboxEvent]
) -> dict[str, list[_Copy]]:
    """The stored rows under these events' ids within the window of their times."""
    stored: dict[str, list[_Copy]] = {}
    for cluster in clusters(events):
        ids = list(dict.fromkeys(e.event_id for e in cluster.events))
        placeholders = ",".join("?" * len(ids))
        found = fetch(
            con,
            _Copy,
            "SELECT event_id, epoch_us(occurred_at) AS occurred_us, body_sha256, stream_seq "
            f"FROM {INBOX} WHERE occurred_at BETWEEN ? AND ? "
            f"AND event_id IN ({placeholders}) ORDER BY stream_seq",
            [cluster.low, cluster.high, *ids],
        )
        for copy in found:
            copies = stored.setdefault(copy.event_id, [])
            if all(c.stream_seq != copy.stream_seq for c in copies):
                copies.append(copy)
    for copies in stored.values():
        copies.sort(key=lambda c: c.stream_seq)
    return stored


def _conflict(e: InboxEvent, first: _Copy) -> DeadLetter:
    return DeadLetter(
        subject=e.subject,
        source_subject=e.source_subject,
        stream_seq=e.stream_seq,
        received_at=e.received_at,
        reason=(
            f"duplicate event_id {e.event_id!r} with a different body; "
            f"the first one (stream_seq {first.stream_seq}) is kept"
        ),
        raw=e.raw,
        event_id=e.event_id,
        published_at=e.published_at,
    )


def _settle_copies(
    con: duckdb.DuckDBPyConnection,
    copies: Sequence[InboxEvent],
    result: BatchResult,
    seq: _CommitSeq,
) -> list[DeadLetter]:
    """Each copy, in stream order: a duplicate (a stored copy within the window has its
    body), a conflict (only other bodies within the window; it becomes a dead letter naming
    the copy that was kept), or, with no stored copy within the window, a new event."""
    stored = _stored_copies(con, copies)
    conflicts = []
    for e in copies:
        near = [c for c in stored.get(e.event_id, ()) if c.near(e)]
        if not near:
            # Its batch-mate within the window was itself a copy of an older event.
            _insert_new(con, [e], seq)
            result.inserted_ids.append(e.event_id)
            stored.setdefault(e.event_id, []).append(
                _Copy(e.event_id, _micros(e.occurred_at), e.body_sha256, e.stream_seq)
            )
        elif any(c.body_sha256 == e.body_sha256 for c in near):
            result.duplicates += 1
        else:
            result.conflicts += 1
            conflicts.append(_conflict(e, near[0]))
    return conflicts


@dataclass(frozen=True)
class StagedBatch:
    """A batch made ready for its transaction without the database: split into first
    copies and later copies of an id, grouped by time and turned into Arrow tables. The
    drain stages a batch on its event loop, so the writer's thread, which competes with the
    event loop for the GIL, runs little more than DuckDB's own statements."""

    first: list[InboxEvent]
    copies: list[InboxEvent]
    staged: list[_StagedCluster]
    dead: list[DeadLetter]


def stage_batch(events: Sequence[InboxEvent], dead: Sequence[DeadLetter]) -> StagedBatch:
    first, copies = _split_batch(events) if events else ([], [])
    return StagedBatch(first, copies, _stage(first), list(dead))


def write_staged(con: duckdb.DuckDBPyConnection, stream: str, batch: StagedBatch) -> BatchResult:
    """Insert one staged batch; the caller owns the transaction (see :func:`write_batch`)."""
    result = BatchResult()
    dead = list(batch.dead)
    seq = _CommitSeq()
    if batch.first:
        skipped = _append_new(con, batch.staged, seq)
        result.inserted_ids = [e.event_id for e in batch.first if e.stream_seq not in skipped]
        copies = batch.copies + [e for e in batch.first if e.stream_seq in skipped]
        if copies:
            # Rare (redeliveries, re-sends): only now is the inbox read for their bodies.
            dead += _settle_copies(con, sorted(copies, key=_stream_seq), result, seq)
    if dead:
        _insert_dead_letters(con, stream, dead)
        result.dead_lettered = len(dead)
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
    con.register("_staged_dead", _dead_table(stream, dead))
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
        _unregister_quietly(con, "_staged_dead")


__all__ = [
    "DEAD_LETTER",
    "DEDUPE_WINDOW",
    "INBOX",
    "BatchResult",
    "Cluster",
    "StagedBatch",
    "clusters",
    "stage_batch",
    "write_batch",
    "write_staged",
]
