"""``session_turns`` and ``session_trajectories`` from the inbox, by commit position.

A refresh reads only the commits after its step's position (``lib/inbox/commit_spans.py``), the
chat and tool-call events of those commits, and the stored state of the sessions they touch;
it writes the new turns, the touched threads' rows and its new position in one transaction.
Its cost follows what is new and the sessions it touches, not the size of the inbox.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb

from model_foundry.lib import settings, storage
from model_foundry.lib.events import CHAT_PERSIST, TOOL_CALL
from model_foundry.lib.inbox import commit_spans
from model_foundry.lib.tables.base import fetch
from model_foundry.lib.tables.trajectories import (
    SESSION_TRAJECTORIES,
    SESSION_TURNS,
    SessionTrajectoryRow,
    SessionTurnRow,
)
from model_foundry.lib.trajectories.builder import NewTurn, SessionEvent, build_sessions
from model_foundry.lib.trajectories.state import ThreadState
from model_foundry.lib.trajectories.turns import ToolCall, Turn

STEP = "session_trajectories"

# The span's chat and tool events, one per event id (the inbox may hold a re-sent copy).
_SPAN_EVENTS = f"""
SELECT i.event_id, i.subject, i.correlation_id, i.occurred_at, i.payload::VARCHAR AS payload
FROM pipeline_event_inbox i
WHERE {commit_spans.IN_SPAN} AND i.subject IN ('{CHAT_PERSIST}', '{TOOL_CALL}')
QUALIFY row_number() OVER (PARTITION BY i.event_id ORDER BY i.commit_seq, i.stream_seq) = 1
ORDER BY i.occurred_at, i.commit_seq, i.stream_seq
"""


@dataclass(frozen=True)
class _SpanEvent:
    event_id: str
    subject: str
    correlation_id: str
    occurred_at: datetime
    payload: str


@dataclass
class TrajectoryRefresh:
    """What one refresh read and wrote."""

    after: int = commit_spans.NOTHING_READ
    upto: int = commit_spans.NOTHING_READ
    events: int = 0
    turns_added: int = 0
    sessions_touched: list[str] = field(default_factory=list)
    threads: int = 0


def _turn_row(new: NewTurn) -> SessionTurnRow:
    t = new.turn
    return SessionTurnRow(
        correlation_id=new.correlation_id,
        thread=new.thread,
        turn_index=new.index,
        role=t.role,
        content=t.content,
        reasoning=t.reasoning,
        tool_calls=json.dumps([c.as_openai() for c in t.tool_calls], ensure_ascii=False),
        tool_call_id=t.tool_call_id,
        name=t.name,
        slot=t.slot,
        model=t.model,
        event_id=t.event_id,
        occurred_at=t.occurred_at,
        finish_reason=t.finish_reason,
        tool_error=t.tool_error,
        origin=t.origin,
    )


def stored_turn(row: SessionTurnRow) -> Turn:
    """The turn a ``session_turns`` row holds: the inverse of :func:`_turn_row`."""
    calls = tuple(
        ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in json.loads(row.tool_calls)
    )
    return Turn(
        role=row.role,
        content=row.content,
        tool_calls=calls,
        tool_call_id=row.tool_call_id,
        name=row.name,
        reasoning=row.reasoning,
        slot=row.slot,
        model=row.model,
        event_id=row.event_id,
        occurred_at=row.occurred_at,
        finish_reason=row.finish_reason,
        tool_error=row.tool_error,
        origin=row.origin,
    )


def _thread_row(state: ThreadState) -> SessionTrajectoryRow:
    return SessionTrajectoryRow(
        correlation_id=state.correlation_id,
        thread=state.thread,
        turns=state.turns,
        first_at=state.first_at,
        last_at=state.last_at,
        models=sorted(state.models),
        slots=sorted(state.slots),
        events=len(state.event_ids),
        tool_events=state.tool_events,
        tool_events_matched=state.tool_events_matched,
        tool_errors=state.tool_errors,
        state=state.to_json(),
    )


def stored_states(con: duckdb.DuckDBPyConnection, sessions: list[str]) -> list[ThreadState]:
    rows = con.execute(
        "SELECT state::VARCHAR FROM session_trajectories "
        "WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))",
        [sessions],
    ).fetchall()
    return [ThreadState.from_json(r[0]) for r in rows]


def refresh_in(con: duckdb.DuckDBPyConnection, *, rebuild: bool = False) -> TrajectoryRefresh:
    """Extend the sessions with the commits after the step's position and advance it; the
    caller owns the transaction."""
    if rebuild:
        con.execute(SESSION_TURNS.delete_all_sql())
        con.execute(SESSION_TRAJECTORIES.delete_all_sql())
        commit_spans.reset(con, STEP)
    span = commit_spans.span(con, STEP)
    result = TrajectoryRefresh(after=span.after, upto=span.upto)
    if not span.empty:
        rows = fetch(con, _SpanEvent, _SPAN_EVENTS, span.params)
        sessions = sorted({r.correlation_id for r in rows})
        states = stored_states(con, sessions) if sessions else []
        applied = {(s.correlation_id, e) for s in states for e in s.event_ids}
        events = [
            SessionEvent(
                r.event_id, r.subject, r.correlation_id, r.occurred_at, json.loads(r.payload)
            )
            for r in rows
            if (r.correlation_id, r.event_id) not in applied
        ]
        builders, turns = build_sessions(events, states)
        SESSION_TURNS.insert(con, [_turn_row(t) for t in turns])
        threads = [_thread_row(t) for b in builders.values() for t in b.threads.values()]
        SESSION_TRAJECTORIES.insert(con, threads, "replace")
        commit_spans.advance(con, span)
        result.events, result.turns_added, result.sessions_touched = (
            len(events),
            len(turns),
            sessions,
        )
    row = con.execute(SESSION_TRAJECTORIES.count_sql()).fetchone()
    result.threads = int(row[0]) if row else 0
    return result


def refresh_session_trajectories(
    db_path: str | Path, *, rebuild: bool = False
) -> TrajectoryRefresh:
    """Bring ``session_trajectories`` up to date with the inbox, in one transaction."""
    limit = settings.downstream_memory_limit()
    with storage.BatchWriter(db_path, memory_limit=limit) as writer:
        return writer.write(lambda con: refresh_in(con, rebuild=rebuild))


__all__ = [
    "STEP",
    "TrajectoryRefresh",
    "refresh_in",
    "refresh_session_trajectories",
    "stored_states",
]
