"""``session_summaries`` and ``session_summary_translations``.

A session is (re)summarised when it has chat events its newest summary did not cover. The
prompt goes to the ``kindergarten`` role (the cheap, many-slot model; the slot file's
fallbacks take over when it is not live), through the completions store, so a rerun sends
only what never succeeded. Each new summary is then translated by the ``translator`` role
into the other language: Japanese summaries into English, everything else into Japanese.
"""

# No `from __future__ import annotations`: Dagster reads the config and resource types of
# decorated functions from their live annotations.

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field

from model_foundry import storage
from model_foundry.automation import on_new_upstream_data
from model_foundry.completions import (
    CompletionBatch,
    CompletionStore,
    Request,
    SlotsResource,
    plan_request,
    progress_logger,
)
from model_foundry.pipeline_schema import PIPELINE_SCHEMA
from model_foundry.resources import FoundryDuckDB
from model_foundry.slot_config import SlotFile

SUMMARY_ROLE = "kindergarten"
TRANSLATION_ROLE = "translator"
SUMMARY_TASK = "session_summary"
TRANSLATION_TASK = "session_summary_translation"
LANGUAGE_NAMES = {"en": "English", "ja": "Japanese"}

# ---------------------------------------------------------------------------------------------
# Pure: language detection and prompts.

_JAPANESE = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u4e00-\u9fff\uff66-\uff9f]")
_LATIN = re.compile(r"[A-Za-z]")


def detect_language(text: str) -> str:
    """``"ja"`` when kana/kanji make up a fifth of the letters, else ``"en"``.

    A fifth, not a half: a Japanese sentence carries code names and English terms, and one
    kanji says as much as several Latin letters.
    """
    ja = len(_JAPANESE.findall(text))
    latin = len(_LATIN.findall(text))
    if ja == 0:
        return "en"
    return "ja" if ja / (ja + latin) >= 0.2 else "en"


def other_language(lang: str) -> str:
    return "en" if lang == "ja" else "ja"


@dataclass(frozen=True)
class ChatLine:
    role: str
    content: str


def transcript(lines: list[ChatLine], *, max_messages: int, max_chars: int) -> str:
    """The last ``max_messages`` messages, each cut to ``max_chars``, as ``role: text`` lines."""
    kept = lines[-max_messages:] if max_messages > 0 else lines
    out = []
    if len(kept) < len(lines):
        out.append(f"[{len(lines) - len(kept)} earlier messages omitted]")
    for line in kept:
        text = " ".join(line.content.split())
        if len(text) > max_chars:
            text = text[: max_chars - 1] + "…"
        out.append(f"{line.role}: {text}")
    return "\n".join(out)


def summary_messages(session_id: str, text: str, language: str) -> list[dict[str, str]]:
    """Chat messages asking for a short operator-facing summary of one session."""
    lang = LANGUAGE_NAMES.get(language, "English")
    return [
        {
            "role": "system",
            "content": (
                "You summarise sessions of an AI coding and writing agent for its operator. "
                f"Write 2-4 plain sentences in {lang}: what was asked, what was done, and "
                "anything left open. No preamble."
            ),
        },
        {"role": "user", "content": f"Session {session_id}\n\n{text}\n\nSummarise this session."},
    ]


def translation_params(source: str) -> dict[str, str]:
    return {
        "source_lang": LANGUAGE_NAMES[source],
        "target_lang": LANGUAGE_NAMES[other_language(source)],
    }


# ---------------------------------------------------------------------------------------------
# I/O: what needs a summary or a translation, and writing them.


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

SESSION_MESSAGES_SQL = """
SELECT correlation_id, event_id, occurred_at, role, coalesce(content, '')
FROM chat_messages
WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY correlation_id, occurred_at, event_id, message_index
"""


def sessions_to_summarise(db_path: str | Path, limit: int) -> list[SessionToSummarise]:
    with storage.connect(db_path, schema=PIPELINE_SCHEMA) as con:
        ids = [r[0] for r in con.execute(PENDING_SESSIONS_SQL, [limit]).fetchall()]
        rows = con.execute(SESSION_MESSAGES_SQL, [ids]).fetchall() if ids else []
    sessions: dict[str, SessionToSummarise] = {}
    for corr, event_id, at, role, content in rows:
        s = sessions.setdefault(corr, SessionToSummarise(corr, 0, [], at, at, []))
        if event_id not in s.event_ids:
            s.event_ids.append(event_id)
        s.chat_events = len(s.event_ids)
        s.last_event_at = at
        s.lines.append(ChatLine(role or "unknown", content))
    return list(sessions.values())


INSERT_SUMMARIES_SQL = """
    INSERT INTO session_summaries (
        request_key, correlation_id, chat_events, event_ids, first_event_at,
        last_event_at, language, summary, slot, model, prompt_tokens,
        completion_tokens, latency_s, gen_tps, run_id
    ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT DO NOTHING
    """


def write_summaries(db_path: str | Path, rows: list[tuple[Any, ...]]) -> int:
    return storage.insert_new_rows(db_path, INSERT_SUMMARIES_SQL, rows, schema=PIPELINE_SCHEMA)


PENDING_TRANSLATIONS_SQL = """
SELECT s.request_key, s.correlation_id, s.language, s.summary
FROM session_summaries s
WHERE NOT EXISTS (
    SELECT 1 FROM session_summary_translations t WHERE t.summary_key = s.request_key
)
ORDER BY s.created_at
LIMIT ?
"""


def summaries_to_translate(db_path: str | Path, limit: int) -> list[tuple[str, str, str, str]]:
    with storage.connect(db_path, schema=PIPELINE_SCHEMA) as con:
        return con.execute(PENDING_TRANSLATIONS_SQL, [limit]).fetchall()


INSERT_TRANSLATIONS_SQL = """
    INSERT INTO session_summary_translations (
        summary_key, correlation_id, request_key, source_lang, target_lang,
        source_text, translation, slot, model, prompt_tokens, completion_tokens,
        latency_s, gen_tps, run_id
    ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT DO NOTHING
    """


def write_translations(db_path: str | Path, rows: list[tuple[Any, ...]]) -> int:
    return storage.insert_new_rows(db_path, INSERT_TRANSLATIONS_SQL, rows, schema=PIPELINE_SCHEMA)


def plan_summaries(
    sessions: list[SessionToSummarise],
    slot_file: SlotFile,
    *,
    profile: str | None,
    role: str,
    max_messages: int,
    max_chars: int,
) -> list[tuple[SessionToSummarise, Request]]:
    planned = []
    for s in sessions:
        text = transcript(s.lines, max_messages=max_messages, max_chars=max_chars)
        messages = summary_messages(s.correlation_id, text, detect_language(text))
        request = plan_request(slot_file, SUMMARY_TASK, role, profile=profile, messages=messages)
        planned.append((s, request))
    return planned


# ---------------------------------------------------------------------------------------------
# The assets.


class SummaryConfig(dg.Config):
    role: str = Field(default=SUMMARY_ROLE, description="Role that writes the summaries.")
    max_sessions: int = Field(default=500, description="Sessions summarised per run at most.")
    max_messages: int = Field(default=40, description="Newest messages kept in the prompt.")
    max_chars_per_message: int = Field(default=600, description="Each message is cut to this.")


@dg.asset(
    deps=[dg.AssetKey("chat_messages")],
    group_name="summaries",
    kinds={"duckdb", "llm"},
    automation_condition=on_new_upstream_data(),
    description=(
        "A short summary of each chat session with new events, written by the kindergarten "
        "role (profile fallbacks apply); one row per summary with slot, model, tokens and the "
        "events it covered."
    ),
)
def session_summaries(
    context: dg.AssetExecutionContext,
    config: SummaryConfig,
    duckdb: FoundryDuckDB,
    slots: SlotsResource,
) -> dg.MaterializeResult:
    pending = sessions_to_summarise(duckdb.database, config.max_sessions)
    if not pending:
        # Nothing new: no need to read the slot file or reach any slot.
        return dg.MaterializeResult(
            metadata={
                "sessions_pending": 0,
                "summaries_written": 0,
                **CompletionBatch(0).metadata(),
            }
        )
    slot_file = slots.load()
    planned = plan_summaries(
        pending,
        slot_file,
        profile=slots.profile,
        role=config.role,
        max_messages=config.max_messages,
        max_chars=config.max_chars_per_message,
    )
    context.log.info(f"{len(planned)} sessions have chat events no summary covers yet")
    store = CompletionStore(duckdb.database, run_id=context.run.run_id)
    batch = store.run(
        [r for _, r in planned],
        slot_file,
        slots.profile,
        options=slots.dispatch_options(),
        progress=progress_logger(context.log.info, "session summaries"),
    )
    rows = []
    for s, request in planned:
        c = batch.results.get(request.key)
        if c is None or not c.content.strip():
            continue
        rows.append(
            (
                request.key,
                s.correlation_id,
                s.chat_events,
                json.dumps(s.event_ids),
                s.first_event_at,
                s.last_event_at,
                detect_language(c.content),
                c.content.strip(),
                c.slot,
                c.model,
                c.prompt_tokens,
                c.completion_tokens,
                c.latency_s,
                c.gen_tps,
                context.run.run_id,
            )
        )
    written = write_summaries(duckdb.database, rows)
    if batch.failed:
        context.log.warning(
            f"{len(batch.failed)} summaries failed after retries; the next run retries them"
        )
    return dg.MaterializeResult(
        metadata={
            "sessions_pending": len(pending),
            "summaries_written": written,
            "dagster/row_count": written,
            "correlation_ids": dg.MetadataValue.json([s.correlation_id for s in pending][:200]),
            **batch.metadata(),
        }
    )


class TranslationConfig(dg.Config):
    role: str = Field(default=TRANSLATION_ROLE, description="Role that translates.")
    max_summaries: int = Field(default=500, description="Summaries translated per run at most.")


@dg.asset(
    deps=[session_summaries],
    group_name="summaries",
    kinds={"duckdb", "llm"},
    automation_condition=on_new_upstream_data(),
    description=(
        "Each session summary in the other language (Japanese <-> English, detected), "
        "by the translator role."
    ),
)
def session_summary_translations(
    context: dg.AssetExecutionContext,
    config: TranslationConfig,
    duckdb: FoundryDuckDB,
    slots: SlotsResource,
) -> dg.MaterializeResult:
    pending = summaries_to_translate(duckdb.database, config.max_summaries)
    if not pending:
        return dg.MaterializeResult(
            metadata={
                "summaries_pending": 0,
                "translations_written": 0,
                **CompletionBatch(0).metadata(),
            }
        )
    slot_file = slots.load()
    planned = []
    for summary_key, corr, lang, text in pending:
        params = translation_params(lang)
        request = plan_request(
            slot_file,
            TRANSLATION_TASK,
            config.role,
            profile=slots.profile,
            text=text,
            params=params,
        )
        planned.append((summary_key, corr, params, text, request))
    store = CompletionStore(duckdb.database, run_id=context.run.run_id)
    batch = store.run(
        [p[-1] for p in planned],
        slot_file,
        slots.profile,
        options=slots.dispatch_options(),
        progress=progress_logger(context.log.info, "summary translations"),
    )
    rows = []
    directions: dict[str, int] = {}
    for summary_key, corr, params, text, request in planned:
        c = batch.results.get(request.key)
        if c is None or not c.content.strip():
            continue
        direction = f"{params['source_lang']} -> {params['target_lang']}"
        directions[direction] = directions.get(direction, 0) + 1
        rows.append(
            (
                summary_key,
                corr,
                request.key,
                params["source_lang"],
                params["target_lang"],
                text,
                c.content.strip(),
                c.slot,
                c.model,
                c.prompt_tokens,
                c.completion_tokens,
                c.latency_s,
                c.gen_tps,
                context.run.run_id,
            )
        )
    written = write_translations(duckdb.database, rows)
    return dg.MaterializeResult(
        metadata={
            "summaries_pending": len(pending),
            "translations_written": written,
            "dagster/row_count": written,
            "directions": dg.MetadataValue.json(directions),
            **batch.metadata(),
        }
    )


summary_assets = [session_summaries, session_summary_translations]

__all__ = [
    "SUMMARY_ROLE",
    "TRANSLATION_ROLE",
    "ChatLine",
    "detect_language",
    "other_language",
    "session_summaries",
    "session_summary_translations",
    "summary_assets",
    "summary_messages",
    "transcript",
    "translation_params",
]
