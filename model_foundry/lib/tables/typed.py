"""The typed tables refreshed from the inbox: chat, tool calls, lineage, semantic searches.

None has a PRIMARY KEY: like the inbox's (``lib/inbox/store.py``), a key's index would grow
with the events and be held in memory. Each is fed by commit position, exactly once per inbox
row, and a row whose event is already stored within the inbox's dedupe window is left out
(``lib/inbox/typed/``): an event is stored once, as the key kept it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from model_foundry.lib.tables.base import Table


@dataclass(frozen=True)
class ChatMessageRow:
    """One message of an ``llm.chat.persist`` event; usage is the event's, on each message."""

    event_id: str
    message_index: int
    correlation_id: str
    occurred_at: datetime
    role: str | None
    content: str | None
    model: str | None
    slot: str | None
    prompt_tokens: int | None
    completion_tokens: int | None


@dataclass(frozen=True)
class ChatSessionRow:
    """One chat session; new messages' figures are merged into it."""

    correlation_id: str
    first_at: datetime | None
    last_at: datetime | None
    chat_events: int | None
    messages: int | None
    user_messages: int | None
    assistant_messages: int | None
    models: list[str] | None
    slots: list[str] | None
    prompt_tokens: int | None
    completion_tokens: int | None
    refreshed_at: datetime | None


@dataclass(frozen=True)
class ToolCallRow:
    """One ``llm.tool_call`` event. ``arguments`` is JSON text."""

    event_id: str
    correlation_id: str
    occurred_at: datetime
    tool: str
    status: str | None
    ok: bool | None
    duration_ms: float | None
    arguments: str | None
    result: str | None


@dataclass(frozen=True)
class FlowNodeRow:
    event_id: str
    correlation_id: str
    occurred_at: datetime
    node_id: str
    label: str | None
    # Who ran the step, when the node event says so: the flow picture's colours.
    slot: str | None = None
    role: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class FlowEdgeRow:
    event_id: str
    correlation_id: str
    occurred_at: datetime
    source: str
    target: str


@dataclass(frozen=True)
class SemanticSearchRow:
    """One ``obsidian.semantic_search`` event. ``results`` is JSON text."""

    event_id: str
    correlation_id: str
    occurred_at: datetime
    query: str
    result_count: int | None
    top_path: str | None
    top_score: float | None
    results: str | None


CHAT_MESSAGES: Table[ChatMessageRow] = Table(
    "chat_messages",
    ChatMessageRow,
    """
    CREATE TABLE IF NOT EXISTS chat_messages (
        event_id VARCHAR NOT NULL,
        message_index INTEGER NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        role VARCHAR,
        content VARCHAR,
        model VARCHAR,
        slot VARCHAR,
        prompt_tokens BIGINT,
        completion_tokens BIGINT
    )
    """,
)

CHAT_SESSIONS: Table[ChatSessionRow] = Table(
    "chat_sessions",
    ChatSessionRow,
    """
    CREATE TABLE IF NOT EXISTS chat_sessions (
        correlation_id VARCHAR NOT NULL,
        first_at TIMESTAMPTZ,
        last_at TIMESTAMPTZ,
        chat_events BIGINT,
        messages BIGINT,
        user_messages BIGINT,
        assistant_messages BIGINT,
        models VARCHAR[],
        slots VARCHAR[],
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        refreshed_at TIMESTAMPTZ
    )
    """,
)

TOOL_CALLS: Table[ToolCallRow] = Table(
    "tool_calls",
    ToolCallRow,
    """
    CREATE TABLE IF NOT EXISTS tool_calls (
        event_id VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        tool VARCHAR NOT NULL,
        status VARCHAR,
        ok BOOLEAN,
        duration_ms DOUBLE,
        arguments JSON,
        result VARCHAR
    )
    """,
)

FLOW_NODES: Table[FlowNodeRow] = Table(
    "flow_nodes",
    FlowNodeRow,
    """
    CREATE TABLE IF NOT EXISTS flow_nodes (
        event_id VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        node_id VARCHAR NOT NULL,
        label VARCHAR,
        slot VARCHAR,
        role VARCHAR,
        model VARCHAR
    )
    """,
    # Files written before node events kept their slot, role and model get the columns.
    indexes=tuple(
        f"ALTER TABLE flow_nodes ADD COLUMN IF NOT EXISTS {column} VARCHAR"
        for column in ("slot", "role", "model")
    ),
)

FLOW_EDGES: Table[FlowEdgeRow] = Table(
    "flow_edges",
    FlowEdgeRow,
    """
    CREATE TABLE IF NOT EXISTS flow_edges (
        event_id VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        source VARCHAR NOT NULL,
        target VARCHAR NOT NULL
    )
    """,
)

SEMANTIC_SEARCHES: Table[SemanticSearchRow] = Table(
    "semantic_searches",
    SemanticSearchRow,
    """
    CREATE TABLE IF NOT EXISTS semantic_searches (
        event_id VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        query VARCHAR NOT NULL,
        result_count INTEGER,
        top_path VARCHAR,
        top_score DOUBLE,
        results JSON
    )
    """,
)

__all__ = [
    "CHAT_MESSAGES",
    "CHAT_SESSIONS",
    "FLOW_EDGES",
    "FLOW_NODES",
    "SEMANTIC_SEARCHES",
    "TOOL_CALLS",
    "ChatMessageRow",
    "ChatSessionRow",
    "FlowEdgeRow",
    "FlowNodeRow",
    "SemanticSearchRow",
    "ToolCallRow",
]
