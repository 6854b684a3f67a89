"""``session_turns`` (one row per turn of a session thread) and ``session_trajectories`` (one
row per thread: its figures and the state the next refresh extends; ``lib/trajectories``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table


@dataclass(frozen=True)
class SessionTurnRow:
    """One turn; ``tool_calls`` is JSON text in OpenAI's shape (``arguments`` a string)."""

    correlation_id: str
    thread: str
    turn_index: int
    role: str
    content: str | None
    reasoning: str | None
    tool_calls: str
    tool_call_id: str | None
    name: str | None
    slot: str | None
    model: str | None
    event_id: str
    occurred_at: datetime | None
    finish_reason: str | None
    tool_error: bool
    origin: str


@dataclass(frozen=True)
class SessionTrajectoryRow:
    """One thread of a session. ``state`` is the builder's JSON (``ThreadState``)."""

    correlation_id: str
    thread: str
    turns: int
    first_at: datetime | None
    last_at: datetime | None
    models: list[str]
    slots: list[str]
    events: int
    tool_events: int
    tool_events_matched: int
    tool_errors: int
    state: str
    updated_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


# No key: the table grows with the inbox and a key's index would be held in memory. The
# refresh writes each turn once (by commit position, in the transaction that advances it).
SESSION_TURNS: Table[SessionTurnRow] = Table(
    "session_turns",
    SessionTurnRow,
    """
    CREATE TABLE IF NOT EXISTS session_turns (
        correlation_id VARCHAR NOT NULL,
        thread VARCHAR NOT NULL,
        turn_index INTEGER NOT NULL,
        role VARCHAR NOT NULL,
        content VARCHAR,
        reasoning VARCHAR,
        tool_calls JSON NOT NULL,
        tool_call_id VARCHAR,
        name VARCHAR,
        slot VARCHAR,
        model VARCHAR,
        event_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ,
        finish_reason VARCHAR,
        tool_error BOOLEAN NOT NULL,
        origin VARCHAR NOT NULL
    )
    """,
)

SESSION_TRAJECTORIES: Table[SessionTrajectoryRow] = Table(
    "session_trajectories",
    SessionTrajectoryRow,
    """
    CREATE TABLE IF NOT EXISTS session_trajectories (
        correlation_id VARCHAR NOT NULL,
        thread VARCHAR NOT NULL,
        turns INTEGER NOT NULL,
        first_at TIMESTAMPTZ,
        last_at TIMESTAMPTZ,
        models VARCHAR[] NOT NULL,
        slots VARCHAR[] NOT NULL,
        events INTEGER NOT NULL,
        tool_events INTEGER NOT NULL,
        tool_events_matched INTEGER NOT NULL,
        tool_errors INTEGER NOT NULL,
        state JSON NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (correlation_id, thread)
    )
    """,
)

__all__ = ["SESSION_TRAJECTORIES", "SESSION_TURNS", "SessionTrajectoryRow", "SessionTurnRow"]
