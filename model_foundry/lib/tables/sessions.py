"""``session_flow`` (each session's lineage graph as figures) and ``session_routing`` (which
slot did what share of each session's chat turns), with the views over the routing.

Both are rebuilt per session when the session got new events: a growing session's rows are
replaced, never duplicated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table, View


@dataclass(frozen=True)
class SessionFlowRow:
    """One session's flow: event counts, graph size and shape, and what is flagged."""

    correlation_id: str
    first_at: datetime | None
    last_at: datetime | None
    node_events: int
    edge_events: int
    nodes: int
    edges: int
    roots: int
    leaves: int
    depth: int
    max_fan_out: int
    parallel_branches: int
    uncoordinated_branches: int
    # Parallel branches that never joined again, with no edge between them.
    uncoordinated: bool
    # Edges naming a node that had no node event, and cycles: flagged, never dropped.
    dangling_edges: int
    cycles: int
    # The slots the session's node events named.
    slots: tuple[str, ...]
    refreshed_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


SESSION_FLOW: Table[SessionFlowRow] = Table(
    "session_flow",
    SessionFlowRow,
    """
    CREATE TABLE IF NOT EXISTS session_flow (
        correlation_id VARCHAR PRIMARY KEY,
        first_at TIMESTAMPTZ,
        last_at TIMESTAMPTZ,
        node_events BIGINT NOT NULL,
        edge_events BIGINT NOT NULL,
        nodes BIGINT NOT NULL,
        edges BIGINT NOT NULL,
        roots BIGINT NOT NULL,
        leaves BIGINT NOT NULL,
        depth BIGINT NOT NULL,
        max_fan_out BIGINT NOT NULL,
        parallel_branches BIGINT NOT NULL,
        uncoordinated_branches BIGINT NOT NULL,
        uncoordinated BOOLEAN NOT NULL,
        dangling_edges BIGINT NOT NULL,
        cycles BIGINT NOT NULL,
        slots VARCHAR[],
        refreshed_at TIMESTAMPTZ DEFAULT now()
    )
    """,
)


@dataclass(frozen=True)
class SessionRoutingRow:
    """A slot's part of one session's chat turns on one day; a session's shares sum to 1."""

    correlation_id: str
    day: date
    slot: str
    roles: tuple[str, ...]
    model: str | None
    turns: int
    prompt_tokens: int
    completion_tokens: int
    share: float
    session_turns: int
    # The session's last turn: the check's window is the sessions with the newest turns.
    session_last_at: datetime
    # Slot names these turns gave that the slot file lacks (mostly the unknown bucket's).
    named_as: tuple[str, ...]


SESSION_ROUTING: Table[SessionRoutingRow] = Table(
    "session_routing",
    SessionRoutingRow,
    """
    CREATE TABLE IF NOT EXISTS session_routing (
        correlation_id VARCHAR NOT NULL,
        day DATE NOT NULL,
        slot VARCHAR NOT NULL,
        roles VARCHAR[],
        model VARCHAR,
        turns BIGINT NOT NULL,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        share DOUBLE NOT NULL,
        session_turns BIGINT NOT NULL,
        session_last_at TIMESTAMPTZ NOT NULL,
        named_as VARCHAR[],
        PRIMARY KEY (correlation_id, day, slot)
    )
    """,
)

# Which slot did what share of the sessions' work this week (the last 7 days, today included).
SLOT_SHARE_WEEKLY = View(
    "slot_share_weekly",
    """
    SELECT slot,
           count(DISTINCT correlation_id) AS sessions,
           sum(turns)::BIGINT AS turns,
           sum(prompt_tokens)::BIGINT AS prompt_tokens,
           sum(completion_tokens)::BIGINT AS completion_tokens,
           round(sum(turns) / sum(sum(turns)) OVER (), 4) AS share
    FROM session_routing
    WHERE day > current_date - INTERVAL 7 DAY
    GROUP BY slot
    """,
)

__all__ = [
    "SESSION_FLOW",
    "SESSION_ROUTING",
    "SLOT_SHARE_WEEKLY",
    "SessionFlowRow",
    "SessionRoutingRow",
]
