"""``session_summary_translations``: each summary in the other language, by the translator.

One request per summary and one row per answer: a :class:`~model_foundry.lib.llm.WorkKind`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.llm import Answer, Body, Request, WorkKind, answer_event
from model_foundry.lib.summaries.pending import SummaryToTranslate
from model_foundry.lib.summaries.prompts import translation_params
from model_foundry.lib.tables.summaries import (
    SESSION_SUMMARY_TRANSLATION_QUEUE,
    SESSION_SUMMARY_TRANSLATIONS,
    TranslationRow,
)

TRANSLATION_ROLE = "translator"
TRANSLATION_TASK = "session_summary_translation"


DEQUEUE_SQL = f"DELETE FROM {SESSION_SUMMARY_TRANSLATION_QUEUE.name} WHERE summary_key = ?"


def write_translations(db_path: str | Path, rows: Sequence[TranslationRow]) -> int:
    """The translations not stored yet, their summaries off the translation queue, in one
    transaction; how many were new."""
    table = SESSION_SUMMARY_TRANSLATIONS
    insert = table.insert_sql("nothing")

    def work(con: duckdb.DuckDBPyConnection) -> int:
        written = sum(con.execute(insert, list(table.values(r))).fetchone()[0] for r in rows)
        for r in rows:
            con.execute(DEQUEUE_SQL, [r.summary_key])
        return written

    return storage.run_in_transaction(db_path, work) if rows else 0


class Translations(WorkKind[SummaryToTranslate, TranslationRow]):
    label = "summary translations"
    event = "model_foundry.translation"

    def __init__(self, role: str = TRANSLATION_ROLE) -> None:
        self.role = role

    def request(self, item: SummaryToTranslate) -> Request:
        return Request(
            TRANSLATION_TASK,
            self.role,
            Body(text=item.summary),
            params=translation_params(item.language),
            correlation_id=item.correlation_id,
        )

    def row(
        self, item: SummaryToTranslate, answer: Answer, run_id: str | None
    ) -> TranslationRow | None:
        if not answer.text:
            return None
        params, c = answer.request.request.params, answer.completion
        return TranslationRow(
            summary_key=item.summary_key,
            correlation_id=item.correlation_id,
            request_key=answer.request.key,
            source_lang=params["source_lang"],
            target_lang=params["target_lang"],
            source_text=item.summary,
            translation=answer.text,
            slot=c.slot,
            model=c.model,
            prompt_tokens=c.prompt_tokens,
            completion_tokens=c.completion_tokens,
            latency_s=c.latency_s,
            gen_tps=c.gen_tps,
            run_id=run_id,
        )

    def write(self, db_path: Path, rows: Sequence[TranslationRow]) -> int:
        return write_translations(db_path, rows)

    def event_fields(self, item: SummaryToTranslate, answer: Answer) -> Mapping[str, Any]:
        params = answer.request.request.params
        return answer_event(
            answer, source_lang=params["source_lang"], target_lang=params["target_lang"]
        )


def directions(rows: Sequence[TranslationRow]) -> dict[str, int]:
    """How many translations went each way (``English -> Japanese``)."""
    return dict(Counter(f"{r.source_lang} -> {r.target_lang}" for r in rows))


__all__ = [
    "TRANSLATION_ROLE",
    "TRANSLATION_TASK",
    "Translations",
    "directions",
    "write_translations",
]
