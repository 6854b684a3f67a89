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
from model_foundry.lib.gates.answers import gate, target_language
from model_foundry.lib.gates.config import GateConfig
from model_foundry.lib.llm import Answer, Body, Request, WorkKind, answer_event
from model_foundry.lib.slots.quirks import translation_messages
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
QUEUED_SQL = SESSION_SUMMARY_TRANSLATION_QUEUE.count_sql("summary_key = ?")


def write_translations(db_path: str | Path, rows: Sequence[TranslationRow]) -> int:
    """The translations of summaries still waiting in the translation queue, and those
    summaries off it, in one transaction; how many were new.

    No key index: a summary joins the queue once, when it is stored (a summary is never
    stored twice, lib/summaries/rows.py), and leaves it in the transaction that stores its
    translation. So a translation whose summary is no longer queued is stored already, and
    the check reads only the queue, as small as the backlog. (Two sessions whose summaries
    share a request key, the same transcript, each get their row: ``correlation_id``.)"""
    table = SESSION_SUMMARY_TRANSLATIONS

    def work(con: duckdb.DuckDBPyConnection) -> int:
        new: dict[tuple[str, str], TranslationRow] = {}
        for r in rows:
            found = con.execute(QUEUED_SQL, [r.summary_key]).fetchone()
            if found and found[0]:
                new.setdefault((r.summary_key, r.correlation_id), r)
        for r in new.values():
            con.execute(table.insert_sql(), table.values(r))
        for key in dict.fromkeys(r.summary_key for r in rows):
            con.execute(DEQUEUE_SQL, [key])
        return len(new)

    return storage.run_in_transaction(db_path, work) if rows else 0


class Translations(WorkKind[SummaryToTranslate, TranslationRow]):
    label = "summary translations"
    event = "model_foundry.translation"

    def __init__(self, role: str = TRANSLATION_ROLE, gates: GateConfig | None = None) -> None:
        self.role = role
        self.gates = gates or GateConfig()

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
        # Measured against the instruction a chat slot gets too: a model that gives it back
        # is an echo, not a translation.
        asked = translation_messages(item.summary, params["source_lang"], params["target_lang"])
        cause = gate(
            answer.text,
            finish_reason=c.finish_reason,
            prompt="\n".join(m["content"] for m in asked),
            target_lang=target_language([], params),
            config=self.gates,
        )
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
            gate=cause,
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
