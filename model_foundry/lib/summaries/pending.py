"""What needs a summary or a translation: read from DuckDB, from where the work stands.

A session is (re)summarised when it has chat events its newest summary did not cover; a
summary is translated once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from model_foundry.lib import storage
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


PENDING_SESSIONS_SQL = """
WITH sessions AS (
    SELECT correlation_id, count(DISTINCT event_id) AS chat_events
    FROM chat_messages GROUP BY correlation_id
), covered AS (
    SELECT correlation_id, max(chat_events) AS chat_events
    FROM session_summaries GROUP BY correlation_id
)
SELECT s.correlation_id
FROM sessions s LEFT JOIN covered c USING (correlation_id)
WHERE s.chat_events > coalesce(c.chat_events, 0)
ORDER BY s.correlation_id
LIMIT ?
"""


@dataclass(frozen=True)
class _Message:
    correlation_id: str
    event_id: str
    occurred_at: datetime
    role: str | None
    content: str


SESSION_MESSAGES_SQL = """
SELECT correlation_id, event_id, occurred_at, role, coalesce(content, '') AS content
FROM chat_messages
WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY correlation_id, occurred_at, event_id, message_index
"""


def sessions_to_summarise(db_path: str | Path, limit: int) -> list[SessionToSummarise]:
    with storage.connect(db_path) as con:
        ids = [r[0] for r in con.execute(PENDING_SESSIONS_SQL, [limit]).fetchall()]
        messages = fetch(con, _Message, SESSION_MESSAGES_SQL, [ids]) if ids else []
    sessions: dict[str, SessionToSummarise] = {}
    for m in messages:
        s = sessions.get(m.correlation_id)
        if s is None:
            s = sessions[m.correlation_id] = SessionToSummarise(
                correlation_id=m.correlation_id, chat_events=0, event_ids=[],
                first_event_at=m.occurred_at, last_event_at=m.occurred_at, lines=[],
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


PENDING_TRANSLATIONS_SQL = """
SELECT s.request_key AS summary_key, s.correlation_id, s.language, s.summary
FROM session_summaries s
WHERE NOT EXISTS (
    SELECT 1 FROM session_summary_translations t WHERE t.summary_key = s.request_key
)
ORDER BY s.created_at
LIMIT ?
"""


def summaries_to_translate(db_path: str | Path, limit: int) -> list[SummaryToTranslate]:
    with storage.connect(db_path) as con:
        return fetch(con, SummaryToTranslate, PENDING_TRANSLATIONS_SQL, [limit])


__all__ = [
    "SessionToSummarise",
    "SummaryToTranslate",
    "sessions_to_summarise",
    "summaries_to_translate",
]
