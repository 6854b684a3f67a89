"""``session_summaries`` and ``session_summary_translations``.

A session is (re)summarised when it has chat events its newest summary did not cover. The
prompt goes to the ``kindergarten`` role (the cheap, many-slot model; the slot file's
fallbacks take over when it is not live), through the completions store, so a rerun sends
only what never succeeded. Each new summary is then translated by the ``translator`` role
into the other language: Japanese summaries into English, everything else into Japanese.
"""

# No `from __future__ import annotations`: Dagster reads the config and resource types of
# decorated functions from their live annotations.

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from model_foundry.lib import storage

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
    with storage.connect(db_path) as con:
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
    return storage.insert_new_rows(db_path, INSERT_SUMMARIES_SQL, rows)


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
    with storage.connect(db_path) as con:
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
    return storage.insert_new_rows(db_path, INSERT_TRANSLATIONS_SQL, rows)


# ---------------------------------------------------------------------------------------------

__all__ = [
    "SUMMARY_ROLE",
    "TRANSLATION_ROLE",
    "ChatLine",
    "detect_language",
    "other_language",
    "summary_messages",
    "transcript",
    "translation_params",
]
