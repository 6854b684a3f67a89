"""The typed refresh's duplicate check: the time ranges of stored rows a span's events could
repeat, one range per island of the span's times widened by the duplicate-check window
(``lib/inbox/dedupe_window.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import duckdb

from model_foundry.lib.inbox import commit_spans
from model_foundry.lib.inbox.dedupe_window import (
    ISLAND_GAP,
    from_micros,
    merged_ranges,
    widened_range,
)

# The span's distinct times in islands: times closer than ISLAND_GAP are one range.
_SPAN_ISLANDS = f"""
WITH times AS (
    SELECT DISTINCT occurred_at FROM pipeline_event_inbox i WHERE {commit_spans.IN_SPAN}
), starts AS (
    SELECT occurred_at,
           coalesce(occurred_at - lag(occurred_at) OVER (ORDER BY occurred_at) > ?, true)
               AS starts
    FROM times
), islands AS (
    SELECT occurred_at, sum(starts::INTEGER) OVER (ORDER BY occurred_at) AS island FROM starts
)
SELECT epoch_us(min(occurred_at)), epoch_us(max(occurred_at))
FROM islands GROUP BY island ORDER BY 1
"""


@dataclass(frozen=True)
class Seen:
    """The check against stored rows: ``t.occurred_at`` within one of the span's ranges.
    Constant ranges let DuckDB skip every row group of the table outside them."""

    ranges: list[tuple[datetime, datetime]]

    @property
    def sql(self) -> str:
        if not self.ranges:
            return "false"
        return " OR ".join("t.occurred_at BETWEEN ? AND ?" for _ in self.ranges)

    def params(self, span: commit_spans.Span) -> list[object]:
        """The parameters of a statement of ``statements.py``, in their order."""
        return [*span.params, *(t for r in self.ranges for t in r)]


def seen_ranges(con: duckdb.DuckDBPyConnection, span: commit_spans.Span) -> Seen:
    rows = con.execute(_SPAN_ISLANDS, [*span.params, ISLAND_GAP]).fetchall()
    return Seen(
        merged_ranges([widened_range(from_micros(low), from_micros(high)) for low, high in rows])
    )


__all__ = ["Seen", "seen_ranges"]
