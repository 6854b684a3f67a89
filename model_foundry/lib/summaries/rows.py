"""The rows a summary run writes: ``session_summaries`` and ``session_summary_parts``, and
the summarised sessions taken off ``session_summary_queue``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.llm import Answer, LlmRun, answer_event
from model_foundry.lib.summaries.mapreduce import Summarised, SummaryOutcome
from model_foundry.lib.summaries.prompts import detect_language
from model_foundry.lib.tables.summaries import (
    SESSION_SUMMARIES,
    SESSION_SUMMARY_PARTS,
    SESSION_SUMMARY_QUEUE,
    SESSION_SUMMARY_TRANSLATION_QUEUE,
    SummaryPartRow,
    SummaryRow,
)


def summary_row(done: Summarised, run_id: str | None) -> SummaryRow | None:
    s, c = done.session, done.completion
    if not c.content.strip():
        return None
    return SummaryRow(
        request_key=done.request.key,
        correlation_id=s.correlation_id,
        chat_events=s.chat_events,
        event_ids=json.dumps(s.event_ids),
        first_event_at=s.first_event_at,
        last_event_at=s.last_event_at,
        language=detect_language(c.content),
        summary=c.content.strip(),
        slot=c.slot,
        model=c.model,
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        latency_s=c.latency_s,
        gen_tps=c.gen_tps,
        run_id=run_id,
    )


def part_rows(summarised: list[Summarised]) -> list[SummaryPartRow]:
    return [
        SummaryPartRow(
            summary_key=s.request.key,
            correlation_id=s.session.correlation_id,
            level=p.level,
            part_index=p.index,
            request_key=p.request_key,
            first_item=p.first,
            last_item=p.last,
        )
        for s in summarised
        for p in s.parts
    ]


def write_summaries(db_path: str | Path, rows: Sequence[SummaryRow]) -> int:
    """The summaries not stored yet; how many were new."""
    table = SESSION_SUMMARIES
    return storage.insert_new_rows(
        db_path, table.insert_sql("nothing"), [table.values(r) for r in rows]
    )


def write_summary_parts(db_path: str | Path, rows: Sequence[SummaryPartRow]) -> int:
    table = SESSION_SUMMARY_PARTS
    return storage.insert_new_rows(
        db_path, table.insert_sql("nothing"), [table.values(r) for r in rows]
    )


# A session leaves the queue only if no commit after the summary's read queued it again.
DEQUEUE_SQL = (
    f"DELETE FROM {SESSION_SUMMARY_QUEUE.name} WHERE correlation_id = ? AND commit_seq <= ?"
)


# A new summary waits for its translation (lib/summaries/translations.py).
QUEUE_TRANSLATION_SQL = (
    f"INSERT INTO {SESSION_SUMMARY_TRANSLATION_QUEUE.name} (summary_key, created_at) "
    "VALUES (?, now())"
)


def store_summaries(
    db_path: str | Path, rows: Sequence[SummaryRow], summarised: Sequence[Summarised]
) -> int:
    """The summaries not stored yet (each queued for its translation) and their parts, and
    their sessions off the summary queue, in one transaction: a run killed at any instant
    did all of it or none (then the next run summarises the session again, and a summary
    stored before is not stored twice: its request key is the key). Returns how many
    summaries were new."""
    stored = {r.request_key for r in rows}
    done = [s for s in summarised if s.request.key in stored]
    parts = part_rows(list(summarised))

    def work(con: duckdb.DuckDBPyConnection) -> int:
        insert = SESSION_SUMMARIES.insert_sql("nothing")
        written = 0
        for r in rows:
            if con.execute(insert, list(SESSION_SUMMARIES.values(r))).fetchone()[0]:
                # now() is the transaction's start: the summary's created_at.
                con.execute(QUEUE_TRANSLATION_SQL, [r.request_key])
                written += 1
        parts_sql = SESSION_SUMMARY_PARTS.insert_sql("nothing")
        for p in parts:
            con.execute(parts_sql, list(SESSION_SUMMARY_PARTS.values(p)))
        for s in done:
            con.execute(DEQUEUE_SQL, [s.session.correlation_id, s.session.queued_commit])
        return written

    return storage.run_in_transaction(db_path, work) if rows or parts else 0


def record_summaries(run: LlmRun, outcome: SummaryOutcome) -> int:
    """Write the run's summaries and their parts, one telemetry event per summary."""
    rows, events = [], []
    for done in outcome.summarised:
        row = summary_row(done, run.run_id)
        if row is None:
            continue
        rows.append(row)
        answer = Answer(done.request, done.completion)
        events.append(answer_event(answer, language=row.language, chat_events=row.chat_events))
    written = store_summaries(run.db_path, rows, outcome.summarised)
    for event in events:
        run.emit("model_foundry.summary", event)
    return written


__all__ = [
    "part_rows",
    "record_summaries",
    "store_summaries",
    "summary_row",
    "write_summaries",
    "write_summary_parts",
]
