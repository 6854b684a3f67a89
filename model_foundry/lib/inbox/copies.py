"""Later copies of an event id: a batch's own repeats, and events a stored row within the
duplicate-check window already has. Each is a duplicate (same body), a conflict (another
body: a dead letter naming the copy kept) or, with no stored copy within the window after
all, a new event."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter

import duckdb

from model_foundry.lib.events import DeadLetter, InboxEvent
from model_foundry.lib.inbox.append import INBOX, CommitSeq, insert_new
from model_foundry.lib.inbox.dedupe_window import clusters, micros, near, near_us
from model_foundry.lib.tables.base import fetch

_stream_seq = attrgetter("stream_seq")


@dataclass(frozen=True)
class StoredCopy:
    """A stored copy of an event_id. Times are compared in microseconds: DuckDB hands a time
    near year 9999 back as text when the session's time zone moves it past the calendar."""

    event_id: str
    occurred_us: int
    body_sha256: str
    stream_seq: int

    def near(self, e: InboxEvent) -> bool:
        return near_us(self.occurred_us, micros(e.occurred_at))


def split_batch(events: Sequence[InboxEvent]) -> tuple[list[InboxEvent], list[InboxEvent]]:
    """The batch's first copies, and its later copies of an id (within the window), each in
    stream order."""
    ordered = sorted(events, key=_stream_seq)
    if len({e.event_id for e in ordered}) == len(ordered):
        return ordered, []  # the usual batch: no id twice, nothing to compare
    first: list[InboxEvent] = []
    later: list[InboxEvent] = []
    seen: dict[str, list[datetime]] = {}
    for e in ordered:
        times = seen.setdefault(e.event_id, [])
        if any(near(t, e.occurred_at) for t in times):
            later.append(e)
        else:
            times.append(e.occurred_at)
            first.append(e)
    return first, later


def _stored_copies(
    con: duckdb.DuckDBPyConnection, events: Sequence[InboxEvent]
) -> dict[str, list[StoredCopy]]:
    """The stored rows under these events' ids within the window of their times."""
    stored: dict[str, list[StoredCopy]] = {}
    for cluster in clusters(events):
        ids = list(dict.fromkeys(e.event_id for e in cluster.events))
        placeholders = ",".join("?" * len(ids))
        found = fetch(
            con,
            StoredCopy,
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


def _conflict(e: InboxEvent, first: StoredCopy) -> DeadLetter:
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


@dataclass
class SettledCopies:
    """What :func:`settle_copies` made of a batch's copies."""

    inserted_ids: list[str] = field(default_factory=list)
    duplicates: int = 0
    conflicts: list[DeadLetter] = field(default_factory=list)


def settle_copies(
    con: duckdb.DuckDBPyConnection, copies: Sequence[InboxEvent], seq: CommitSeq
) -> SettledCopies:
    """Each copy, in the given (stream) order: a duplicate (a stored copy within the window
    has its body), a conflict (only other bodies within the window; it becomes a dead letter
    naming the copy that was kept), or, with no stored copy within the window, a new event."""
    stored = _stored_copies(con, copies)
    settled = SettledCopies()
    for e in copies:
        close = [c for c in stored.get(e.event_id, ()) if c.near(e)]
        if not close:
            # Its batch-mate within the window was itself a copy of an older event.
            insert_new(con, [e], seq)
            settled.inserted_ids.append(e.event_id)
            stored.setdefault(e.event_id, []).append(
                StoredCopy(e.event_id, micros(e.occurred_at), e.body_sha256, e.stream_seq)
            )
        elif any(c.body_sha256 == e.body_sha256 for c in close):
            settled.duplicates += 1
        else:
            settled.conflicts.append(_conflict(e, close[0]))
    return settled


__all__ = ["SettledCopies", "StoredCopy", "settle_copies", "split_batch"]
