"""The duplicate-check window: copies of one ``event_id`` this close in ``occurred_at`` are one
event.

Neither the inbox nor the typed tables have a key (``lib/inbox/store.py`` says why), so a
check for an earlier copy reads only the stored rows whose ``occurred_at`` lies within the
window of the new ones. Rows are appended in roughly ``occurred_at`` order, so constant time
ranges let DuckDB's min-max index skip every row group outside them. This module is the
window and its ranges: its length, a time widened by it (inside Python's calendar: events
may claim year 1 or 9999), and the ranges a check names, merged to at most
:data:`MAX_LOOKUP_RANGES`. The inbox's writer groups a batch's events into :class:`Cluster`
ranges (:func:`clusters`); the typed refresh widens the islands of a span's stored times
(:func:`widened_range`) and merges them (:func:`merged_ranges`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from operator import attrgetter

from model_foundry.lib.events import InboxEvent

# Copies of one event_id whose occurred_at are this close are one event.
DEDUPE_WINDOW = timedelta(hours=1)
# A check names at most this many occurred_at ranges; past it, the closest merge.
MAX_LOOKUP_RANGES = 16
# Sorted times closer than this have overlapping widened ranges: one range reads both.
ISLAND_GAP = 2 * DEDUPE_WINDOW

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)
# The window in microseconds, for times DuckDB hands back as ``epoch_us``.
WINDOW_US = DEDUPE_WINDOW // _MICROSECOND

_occurred_at = attrgetter("occurred_at")


def micros(t: datetime) -> int:
    """``t`` in microseconds since the epoch, as DuckDB's ``epoch_us`` gives it."""
    return (t - _EPOCH) // _MICROSECOND


def from_micros(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def near(a: datetime, b: datetime) -> bool:
    """Whether two copies' times are within the window of each other."""
    return abs(a - b) <= DEDUPE_WINDOW


def near_us(a_us: int, b_us: int) -> bool:
    """:func:`near` for times in microseconds."""
    return abs(a_us - b_us) <= WINDOW_US


def widened(t: datetime) -> tuple[datetime, datetime]:
    """``t`` +- the window, kept inside Python's calendar."""
    return widened_range(t, t)


def widened_range(low: datetime, high: datetime) -> tuple[datetime, datetime]:
    """The range ``low`` .. ``high`` widened by the window, kept inside Python's calendar."""
    return (
        low - DEDUPE_WINDOW if low - _FIRST > DEDUPE_WINDOW else _FIRST,
        high + DEDUPE_WINDOW if _LAST - high > DEDUPE_WINDOW else _LAST,
    )


def _closest(bounds: Sequence[tuple[datetime, datetime]]) -> int:
    """The index of the first of the two neighbouring ranges with the smallest gap."""
    gaps = [bounds[i + 1][0] - bounds[i][1] for i in range(len(bounds) - 1)]
    return gaps.index(min(gaps))


def merged_ranges(
    ranges: list[tuple[datetime, datetime]], most: int = MAX_LOOKUP_RANGES
) -> list[tuple[datetime, datetime]]:
    """Sorted ranges with overlapping ones merged, then the closest merged to ``most``."""
    found: list[tuple[datetime, datetime]] = []
    for low, high in sorted(ranges):
        if found and low <= found[-1][1]:
            found[-1] = (found[-1][0], max(found[-1][1], high))
        else:
            found.append((low, high))
    while len(found) > most:
        i = _closest(found)
        found[i : i + 2] = [(found[i][0], found[i + 1][1])]
    return found


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
    # ISLAND_GAP apart (at the calendar's edges the clipped ranges overlap too), and a
    # cluster ends where its latest event's range does; so widened, the costly part of
    # this loop, runs once per cluster, not once per event.
    for e in sorted(events, key=_occurred_at):
        t = e.occurred_at
        if found and t - last <= ISLAND_GAP:
            found[-1].events.append(e)
        else:
            if found:
                found[-1].high = widened(last)[1]
            found.append(Cluster(widened(t)[0], _LAST, [e]))
        last = t
    if found:
        found[-1].high = widened(last)[1]
    while len(found) > MAX_LOOKUP_RANGES:
        i = _closest([(c.low, c.high) for c in found])
        first, second = found[i], found[i + 1]
        found[i : i + 2] = [Cluster(first.low, second.high, first.events + second.events)]
    return found


__all__ = [
    "DEDUPE_WINDOW",
    "ISLAND_GAP",
    "MAX_LOOKUP_RANGES",
    "WINDOW_US",
    "Cluster",
    "clusters",
    "from_micros",
    "merged_ranges",
    "micros",
    "near",
    "near_us",
    "widened",
    "widened_range",
]
