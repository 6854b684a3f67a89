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
    created_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


SESSION_SUMMARIES: Table[SummaryRow] = Table(
    "session_summaries",
    SummaryRow,
    """
    CREATE TABLE IF NOT EXISTS session_summaries (
        request_key VARCHAR PRIMARY KEY,
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
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

SESSION_SUMMARY_TRANSLATIONS: Table[TranslationRow] = Table(
    "session_summary_translations",
    TranslationRow,
    """
    CREATE TABLE IF NOT EXISTS session_summary_translations (
        summary_key VARCHAR PRIMARY KEY,
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
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (summary_key, level, part_index)
    )
    """,
)

__all__ = [
    "SESSION_SUMMARIES",
    "SESSION_SUMMARY_PARTS",
    "SESSION_SUMMARY_TRANSLATIONS",
    "SummaryPartRow",
    "SummaryRow",
    "TranslationRow",
]
