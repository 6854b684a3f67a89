"""What the inbox checks measure: event ids stored twice, events without a session, and the
dead-letter share per subject. Plain SQL on a connection the caller opened."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from model_foundry.lib.tables.base import fetch
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_DEAD_LETTER, PIPELINE_EVENT_INBOX

INBOX = PIPELINE_EVENT_INBOX.name
DEAD_LETTER = PIPELINE_EVENT_DEAD_LETTER.name


@dataclass(frozen=True)
class IdCounts:
    rows: int
    distinct_ids: int

    @property
    def duplicate_rows(self) -> int:
        return self.rows - self.distinct_ids


@dataclass(frozen=True)
class SubjectCounts:
    """Per subject: events stored and messages dead-lettered."""

    subject: str
    stored: int
    dead: int

    @property
    def dead_share(self) -> float:
        delivered = self.stored + self.dead
        return round(self.dead / delivered, 4) if delivered else 0.0


def id_counts(con: duckdb.DuckDBPyConnection) -> IdCounts:
    return fetch(
        con,
        IdCounts,
        f"SELECT count(*) AS rows, count(DISTINCT event_id) AS distinct_ids FROM {INBOX}",
    )[0]


def missing_correlation_ids(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute(
        f"SELECT count(*) FROM {INBOX} WHERE correlation_id IS NULL OR trim(correlation_id) = ''"
    ).fetchone()
    return int(row[0]) if row else 0


def subject_counts(con: duckdb.DuckDBPyConnection) -> list[SubjectCounts]:
    return fetch(
        con,
        SubjectCounts,
        f"""
        WITH good AS (SELECT subject, count(*) AS n FROM {INBOX} GROUP BY subject),
             bad AS (SELECT subject, count(*) AS n FROM {DEAD_LETTER} GROUP BY subject)
        SELECT coalesce(good.subject, bad.subject) AS subject,
               coalesce(good.n, 0) AS stored, coalesce(bad.n, 0) AS dead
        FROM good FULL OUTER JOIN bad USING (subject)
        ORDER BY subject
        """,
    )


__all__ = ["IdCounts", "SubjectCounts", "id_counts", "missing_correlation_ids", "subject_counts"]
