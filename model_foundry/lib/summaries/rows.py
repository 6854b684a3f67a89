"""The rows a summary run writes: ``session_summaries`` and ``session_summary_parts``, and
the summarised sessions taken off ``session_summary_queue``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.gates.answers import body_text, gate
from model_foundry.lib.gates.config import GateConfig
from model_foundry.lib.gates.script import detect_language
from model_foundry.lib.llm import Answer, LlmRun, answer_event
from model_foundry.lib.summaries.mapreduce import Summarised, SummaryOutcome
from model_foundry.lib.tables.summaries import (
    SESSION_SUMMARIES,
    SESSION_SUMMARY_PARTS,
    SESSION_SUMMARY_QUEUE,
    SESSION_SUMMARY_TRANSLATION_QUEUE,
    SummaryPartRow,
    SummaryRow,
)


def summary_row(
    done: Summarised, run_id: str | None, gates: GateConfig | None = None
) -> SummaryRow | None:
    """The row of a summary, with the quality gate that holds it back (``gates``: the
    ``session_summaries`` thresholds of the hygiene file); None for an empty answer."""
    s, c = done.session, done.completion
    if not c.content.strip():
        return None
    asked = body_text(done.request.request.body.as_dict())
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
        gate=gate(
            c.content, finish_reason=c.finish_reason, prompt=asked, config=gates or GateConfig()
        ),
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


# A summary of the same session and request stored since ``?``. A session's summaries are
# appended in created_at order, so this reads only the row groups written since then.
STORED_SUMMARY_SQL = (
    f"SELECT count(*) FROM {SESSION_SUMMARIES.name} "
    "WHERE created_at >= ? AND correlation_id = ? AND request_key = ?"
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


def _earliest_copy(queued_at: datetime | None) -> datetime:
    """Since when a stored copy of a summary could exist (see :func:`store_summaries`)."""
    if queued_at is None:
        queued_at = datetime.now(UTC)
    return queued_at - storage.CLOCK_STEP_MARGIN


def _store_new(
    con: duckdb.DuckDBPyConnection, rows: Sequence[SummaryRow], since: Mapping[str, datetime]
) -> list[SummaryRow]:
    """Insert each row its session has no copy of since ``since[correlation_id]``, each new
    one queued for its translation; the rows inserted."""
    insert = SESSION_SUMMARIES.insert_sql()
    written = []
    for r in rows:
        found = con.execute(
            STORED_SUMMARY_SQL, [since[r.correlation_id], r.correlation_id, r.request_key]
        ).fetchone()
        if found and found[0]:
            continue
        con.execute(insert, SESSION_SUMMARIES.values(r))
        # now() is the transaction's start: the summary's created_at.
        con.execute(QUEUE_TRANSLATION_SQL, [r.request_key])
        written.append(r)
    return written


def write_summaries(db_path: str | Path, rows: Sequence[SummaryRow]) -> int:
    """The summaries not stored in the last :data:`storage.CLOCK_STEP_MARGIN` (rows of no
    queued session); how many were new."""
    since = {r.correlation_id: _earliest_copy(None) for r in rows}
    return len(storage.run_in_transaction(db_path, lambda con: _store_new(con, rows, since)))


def store_summaries(
    db_path: str | Path, rows: Sequence[SummaryRow], summarised: Sequence[Summarised]
) -> list[SummaryRow]:
    """The summaries not stored yet (each queued for its translation) and their parts, and
    their sessions off the summary queue, in one transaction: a run killed at any instant
    did all of it or none (then the next run summarises the session again). Returns the
    summaries that were new.

    No key index: a copy of a summary (the same session and request key) can only have
    been stored since its session joined the queue (``queued_at``), as each stored summary
    covering a queue row's messages takes the session off or leaves it queued with newer
    messages, and newer messages make another request. So only the summaries created since
    then, less :data:`storage.CLOCK_STEP_MARGIN`, are looked at. A summary's parts are
    stored with it, and only with a summary stored here, so they are never stored twice."""
    since = {s.session.correlation_id: _earliest_copy(s.session.queued_at) for s in summarised}
    since |= {r.correlation_id: _earliest_copy(None) for r in rows if r.correlation_id not in since}
    made = {(s.session.correlation_id, s.request.key): s for s in summarised}

    def work(con: duckdb.DuckDBPyConnection) -> list[SummaryRow]:
        written = _store_new(con, rows, since)
        new = [made.get((r.correlation_id, r.request_key)) for r in written]
        for p in part_rows([s for s in new if s is not None]):
            con.execute(SESSION_SUMMARY_PARTS.insert_sql(), SESSION_SUMMARY_PARTS.values(p))
        stored = {r.request_key for r in rows}
        for s in summarised:
            if s.request.key in stored:
                con.execute(DEQUEUE_SQL, [s.session.correlation_id, s.session.queued_commit])
        return written

    return storage.run_in_transaction(db_path, work) if rows else []


def record_summaries(
    run: LlmRun, outcome: SummaryOutcome, gates: GateConfig | None = None
) -> list[SummaryRow]:
    """Write the run's summaries and their parts, one telemetry event per summary; the rows
    stored (new ones, not copies a killed run already stored)."""
    rows, events = [], []
    for done in outcome.summarised:
        row = summary_row(done, run.run_id, gates)
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
]
