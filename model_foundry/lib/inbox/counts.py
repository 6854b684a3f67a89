"""Events per subject, kept by commit position for the exporter (``lib/metrics``).

The ``inbox_counts`` step merges the counts of the commits after its position into
``pipeline_event_inbox_counts`` (one row per subject), in the downstream refresh's
transaction. A reader adds the commits after that position, which the min-max index finds in
the inbox's last row groups: the read costs the same at ten million rows as at ten thousand,
and is exact whenever it is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from model_foundry.lib.inbox import commit_spans
from model_foundry.lib.tables.positions import PIPELINE_EVENT_INBOX_COUNTS

STEP = "inbox_counts"
COUNTS = PIPELINE_EVENT_INBOX_COUNTS.name

_SPAN_COUNTS = f"""
SELECT subject, count(*) AS events, max(occurred_at) AS newest_at
FROM pipeline_event_inbox i WHERE {commit_spans.IN_SPAN} GROUP BY subject
"""

_MERGE = f"""
UPDATE {COUNTS} c SET events = c.events + d.events,
                      newest_at = greatest(c.newest_at, d.newest_at)
FROM _inbox_counts_delta d WHERE c.subject = d.subject
"""
_ADD = f"""
INSERT INTO {COUNTS} BY NAME SELECT * FROM _inbox_counts_delta d
WHERE NOT EXISTS (SELECT 1 FROM {COUNTS} c WHERE c.subject = d.subject)
"""


def refresh_counts(con: duckdb.DuckDBPyConnection) -> None:
    """Merge the counts of the commits after the step's position; the caller's transaction."""
    span = commit_spans.span(con, STEP)
    if span.empty:
        return
    con.execute(f"CREATE OR REPLACE TEMP TABLE _inbox_counts_delta AS {_SPAN_COUNTS}", span.params)
    try:
        con.execute(_MERGE)
        con.execute(_ADD)
    finally:
        con.execute("DROP TABLE IF EXISTS _inbox_counts_delta")
    commit_spans.advance(con, span)


def reset_counts(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"DELETE FROM {COUNTS}")
    commit_spans.reset(con, STEP)


@dataclass(frozen=True)
class SubjectCount:
    subject: str
    events: int
    newest_at: float | None  # epoch seconds


def read_counts(con: duckdb.DuckDBPyConnection) -> list[SubjectCount]:
    """Every subject's events and newest time: the kept counts plus the commits after them.
    Works on a read-only connection."""
    span = commit_spans.span(con, STEP)
    rows = con.execute(
        f"""
        WITH counted AS (
            SELECT subject, events, newest_at FROM {COUNTS}
            UNION ALL
            {_SPAN_COUNTS}
        )
        SELECT subject, sum(events)::BIGINT, epoch(max(newest_at)) FROM counted GROUP BY subject
        """,
        span.params,
    ).fetchall()
    return [SubjectCount(s, int(n), float(t) if t is not None else None) for s, n, t in rows]


__all__ = ["STEP", "SubjectCount", "read_counts", "refresh_counts", "reset_counts"]
