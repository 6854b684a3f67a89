"""Session summaries, the parts of summaries made in parts, and their translations."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table


@dataclass(frozen=True)
class SummaryRow:
    """One summary of a session's first ``chat_events`` chat events. ``request_key`` is the
    completion request that wrote it; ``event_ids`` is JSON text (the events it covers)."""

    request_key: str
    correlation_id: str
    chat_events: int
    event_ids: str
    first_event_at: datetime | None
    last_event_at: datetime | None
    language: str
    summary: str
    slot: str | None
    model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    gen_tps: float | None
    run_id: str | None
    # The quality gate that holds the summary back (lib/gates), NULL if none.
    gate: str | None = None
    created_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


@dataclass(frozen=True)
class SummaryPartRow:
    """One request of a summary made in parts. level 1: a stretch of the transcript (first and
    last item are message numbers, 1-based); level n > 1: summaries of level n-1 parts (first
    and last item are part numbers of that level)."""

    summary_key: str
    correlation_id: str
    level: int
    part_index: int
    request_key: str
    first_item: int
    last_item: int
    created_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


@dataclass(frozen=True)
class SummaryQueueRow:
    """A session with chat events no summary covers yet. ``first_at`` / ``last_at`` bound its
    messages' times (the summary run reads only those row groups of ``chat_messages``);
    ``commit_seq`` is the inbox commit whose chat events last queued it: a summary made from
    a read that saw that commit takes the session off the queue, one made before does not."""

    correlation_id: str
    first_at: datetime
    last_at: datetime
    commit_seq: int
    queued_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


@dataclass(frozen=True)
class TranslationQueueRow:
    """A summary not translated yet; ``created_at`` is the summary's (the translation run
    reads only the row groups of ``session_summaries`` in its queued summaries' times)."""

    summary_key: str
    created_at: datetime


@dataclass(frozen=True)
class TranslationRow:
    """The translation of the summary whose request key is ``summary_key``; ``request_key``
    is the translation's own completion request."""

    summary_key: str
    correlation_id: str
    request_key: str
    source_lang: str
    target_lang: str
    source_text: str
    translation: str
    slot: str | None
    model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    gen_tps: float | None
    run_id: str | None
    # As SummaryRow.gate: the cause the translation is held back for, NULL if none.
    gate: str | None = None
    created_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


SESSION_SUMMARIES: Table[SummaryRow] = Table(
    "session_summaries",
    SummaryRow,
    """
    CREATE TABLE IF NOT EXISTS session_summaries (
        request_key VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        chat_events BIGINT NOT NULL,
        event_ids JSON NOT NULL,
        first_event_at TIMESTAMPTZ,
        last_event_at TIMESTAMPTZ,
        language VARCHAR NOT NULL,
        summary VARCHAR NOT NULL,
        slot VARCHAR,
        model VARCHAR,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        latency_s DOUBLE,
        gen_tps DOUBLE,
        run_id VARCHAR,
        gate VARCHAR,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

SESSION_SUMMARY_TRANSLATIONS: Table[TranslationRow] = Table(
    "session_summary_translations",
    TranslationRow,
    """
    CREATE TABLE IF NOT EXISTS session_summary_translations (
        summary_key VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        request_key VARCHAR NOT NULL,
        source_lang VARCHAR NOT NULL,
        target_lang VARCHAR NOT NULL,
        source_text VARCHAR NOT NULL,
        translation VARCHAR NOT NULL,
        slot VARCHAR,
        model VARCHAR,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        latency_s DOUBLE,
        gen_tps DOUBLE,
        run_id VARCHAR,
        gate VARCHAR,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

# One-prompt summaries have no rows here.
SESSION_SUMMARY_PARTS: Table[SummaryPartRow] = Table(
    "session_summary_parts",
    SummaryPartRow,
    """
    CREATE TABLE IF NOT EXISTS session_summary_parts (
        summary_key VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        level INTEGER NOT NULL,
        part_index INTEGER NOT NULL,
        request_key VARCHAR NOT NULL,
        first_item INTEGER NOT NULL,
        last_item INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

# Sessions waiting for a summary: one row per session, so as small as the backlog. The
# typed-table step adds a session in the transaction that adds its chat messages and the
# summary run removes it in the transaction that stores its summary: exactly once, without
# reading every session or every summary to find the work.
SESSION_SUMMARY_QUEUE: Table[SummaryQueueRow] = Table(
    "session_summary_queue",
    SummaryQueueRow,
    """
    CREATE TABLE IF NOT EXISTS session_summary_queue (
        correlation_id VARCHAR NOT NULL,
        first_at TIMESTAMPTZ NOT NULL,
        last_at TIMESTAMPTZ NOT NULL,
        commit_seq BIGINT NOT NULL,
        queued_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

# Summaries waiting for their translation, as small as that backlog: the summary run adds a
# summary in the transaction that stores it, the translation run removes it in the
# transaction that stores its translation.
SESSION_SUMMARY_TRANSLATION_QUEUE: Table[TranslationQueueRow] = Table(
    "session_summary_translation_queue",
    TranslationQueueRow,
    """
    CREATE TABLE IF NOT EXISTS session_summary_translation_queue (
        summary_key VARCHAR NOT NULL,
        created_at TIMESTAMPTZ NOT NULL
    )
    """,
)

TRANSLATION_QUEUE_STEP = "session_summary_translation_queue"

# Every summary without a translation (reads both tables: a migration's cost, once).
SEED_TRANSLATION_QUEUE = """
INSERT INTO session_summary_translation_queue BY NAME
SELECT s.request_key AS summary_key, s.created_at
FROM session_summaries s
WHERE NOT EXISTS (
    SELECT 1 FROM session_summary_translations t WHERE t.summary_key = s.request_key
)
"""

# The step whose ``downstream_positions`` row says the queue was seeded (the typed tables'
# position it was seeded at).
SUMMARY_QUEUE_STEP = "session_summary_queue"

# What the queue holds when it is (re)made from the tables: every session with more chat
# events than its newest summary covers (reads every message and summary: a migration's or
# a rebuild's cost, never a run's). ``commit_seq``: the typed tables' position.
SEED_SUMMARY_QUEUE = """
INSERT INTO session_summary_queue BY NAME
WITH sessions AS (
    SELECT correlation_id, count(DISTINCT event_id) AS chat_events,
           min(occurred_at) AS first_at, max(occurred_at) AS last_at
    FROM chat_messages GROUP BY correlation_id
), covered AS (
    SELECT correlation_id, max(chat_events) AS chat_events
    FROM session_summaries GROUP BY correlation_id
)
SELECT s.correlation_id, s.first_at, s.last_at,
       coalesce((SELECT max(position) FROM downstream_positions WHERE step = 'inbox_tables'), 0)
           AS commit_seq
FROM sessions s LEFT JOIN covered c USING (correlation_id)
WHERE s.chat_events > coalesce(c.chat_events, 0)
"""


def queue_seeded(step: str) -> str:
    """The mark that ``step``'s queue is seeded, at the typed tables' position; inserted when
    missing."""
    return f"""
INSERT INTO downstream_positions (step, position)
SELECT '{step}',
       coalesce((SELECT max(position) FROM downstream_positions WHERE step = 'inbox_tables'), -1)
WHERE NOT EXISTS (SELECT 1 FROM downstream_positions WHERE step = '{step}')
"""


__all__ = [
    "SEED_SUMMARY_QUEUE",
    "SEED_TRANSLATION_QUEUE",
    "SESSION_SUMMARIES",
    "SESSION_SUMMARY_PARTS",
    "SESSION_SUMMARY_QUEUE",
    "SESSION_SUMMARY_TRANSLATIONS",
    "SESSION_SUMMARY_TRANSLATION_QUEUE",
    "SUMMARY_QUEUE_STEP",
    "TRANSLATION_QUEUE_STEP",
    "SummaryPartRow",
    "SummaryQueueRow",
    "SummaryRow",
    "TranslationQueueRow",
    "TranslationRow",
    "queue_seeded",
]
