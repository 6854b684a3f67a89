"""What needs a summary or a translation: read from DuckDB, from where the work stands.

A session is (re)summarised when it has chat events its newest summary did not cover: the
typed-table step queues it in ``session_summary_queue`` with those events, and storing its
summary takes it off (``lib/summaries/rows.py``). A summary is translated once: storing it
queues it in ``session_summary_translation_queue``, storing its translation takes it off.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.inbox.dedupe_window import merged_ranges
from model_foundry.lib.summaries.prompts import ChatLine
from model_foundry.lib.tables.base import fetch


@dataclass
class SessionToSummarise:
    correlation_id: str
    chat_events: int
    event_ids: list[str]
    first_event_at: datetime | None
    last_event_at: datetime | None
    lines: list[ChatLine]
    # The queue's commit_seq when the messages were read: storing the summary takes the
    # session off the queue unless a later commit queued it again.
    queued_commit: int = 0
    # When the session joined the queue: a summary of these messages stored before is newer
    # (lib/summaries/rows.py looks for one only since then).
    queued_at: datetime | None = None


# The queue is as small as the backlog; no session or summary is read to find the work.
QUEUED_SESSIONS_SQL = """
SELECT correlation_id, first_at, last_at, commit_seq, queued_at
FROM session_summary_queue
ORDER BY correlation_id
LIMIT ?
"""


@dataclass(frozen=True)
class _Queued:
    correlation_id: str
    first_at: datetime
    last_at: datetime
    commit_seq: int
    queued_at: datetime


@dataclass(frozen=True)
class _Message:
    correlation_id: str
    event_id: str
    occurred_at: datetime
    role: str | None
    content: str


def _messages_sql(ranges: int) -> str:
    """The sessions' messages, read only in their time ranges: chat_messages is appended in
    about ``occurred_at`` order, so DuckDB's min-max index skips every other row group."""
    within = " OR ".join("occurred_at BETWEEN ? AND ?" for _ in range(ranges)) or "false"
    return f"""
SELECT correlation_id, event_id, occurred_at, role, coalesce(content, '') AS content
FROM chat_messages
WHERE ({within}) AND correlation_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY correlation_id, occurred_at, event_id, message_index
"""


def _read_queued(
    con: duckdb.DuckDBPyConnection, limit: int
) -> tuple[list[_Queued], list[_Message]]:
    """The first queued sessions and their messages, in one snapshot (what the queue's
    ``commit_seq`` promises is what the messages hold)."""
    with storage.snapshot(con):
        queued = fetch(con, _Queued, QUEUED_SESSIONS_SQL, [limit])
        ranges = merged_ranges([(q.first_at, q.last_at) for q in queued])
        params = [*(t for r in ranges for t in r), [q.correlation_id for q in queued]]
        messages = fetch(con, _Message, _messages_sql(len(ranges)), params) if queued else []
    return queued, messages


def sessions_to_summarise(db_path: str | Path, limit: int) -> list[SessionToSummarise]:
    """The first ``limit`` sessions of the summary queue with all their messages."""
    with storage.connect(db_path) as con:
        queued, messages = _read_queued(con, limit)
    commits = {q.correlation_id: q.commit_seq for q in queued}
    queued_at = {q.correlation_id: q.queued_at for q in queued}
    sessions: dict[str, SessionToSummarise] = {}
    for m in messages:
        s = sessions.get(m.correlation_id)
        if s is None:
            s = sessions[m.correlation_id] = SessionToSummarise(
                correlation_id=m.correlation_id, chat_events=0, event_ids=[],
                first_event_at=m.occurred_at, last_event_at=m.occurred_at, lines=[],
                queued_commit=commits[m.correlation_id],
                queued_at=queued_at[m.correlation_id],
            )  # fmt: skip
        if m.event_id not in s.event_ids:
            s.event_ids.append(m.event_id)
        s.chat_events = len(s.event_ids)
        s.last_event_at = m.occurred_at
        s.lines.append(ChatLine(m.role or "unknown", m.content))
    return list(sessions.values())


@dataclass(frozen=True)
class SummaryToTranslate:
    summary_key: str
    correlation_id: str
    language: str
    summary: str


QUEUED_TRANSLATIONS_SQL = """
SELECT summary_key, created_at FROM session_summary_translation_queue
ORDER BY created_at, summary_key
LIMIT ?
"""

# Only the row groups in the queued summaries' times: session_summaries is appended in
# created_at order. A queue row names its summary by key and created_at (the same now()),
# so a summary of another session with the same key, stored at another time, is not read.
SUMMARIES_SQL = """
SELECT s.request_key AS summary_key, s.correlation_id, s.language, s.summary
FROM session_summaries s
JOIN (SELECT unnest(?::VARCHAR[]) AS summary_key, unnest(?::TIMESTAMPTZ[]) AS created_at) q
  ON s.request_key = q.summary_key AND s.created_at = q.created_at
WHERE s.created_at BETWEEN ? AND ?
ORDER BY s.created_at, s.request_key
"""


@dataclass(frozen=True)
class _QueuedSummary:
    summary_key: str
    created_at: datetime


def summaries_to_translate(db_path: str | Path, limit: int) -> list[SummaryToTranslate]:
    """The first ``limit`` summaries of the translation queue, oldest first."""
    with storage.connect(db_path) as con:
        queued = fetch(con, _QueuedSummary, QUEUED_TRANSLATIONS_SQL, [limit])
        if not queued:
            return []
        times = [q.created_at for q in queued]
        keys = [q.summary_key for q in queued]
        params = [keys, times, min(times), max(times)]
        return fetch(con, SummaryToTranslate, SUMMARIES_SQL, params)


__all__ = [
    "SessionToSummarise",
    "SummaryToTranslate",
    "sessions_to_summarise",
    "summaries_to_translate",
]
