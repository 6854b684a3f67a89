"""Reading the typed tables for sessions' flow and routing, and writing ``session_flow`` and
``session_routing``.

Only sessions with something new are read: a session whose ``flow_nodes`` / ``flow_edges``
count (or chat turn count) is larger than the one its stored row was built from is rebuilt
whole and its row replaced, the way ``session_summaries`` finds the sessions it owes a
summary. Each refresh is one short transaction; drawing pictures happens after it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.flow.graph import (
    EdgeEvent,
    FlowGraph,
    NodeEvent,
    build_graph,
    flow_figures,
)
from model_foundry.lib.flow.routing import (
    ChatTurn,
    RoutingVerdict,
    session_shares,
    verdict_from_counts,
)
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.tables.sessions import (
    SESSION_FLOW,
    SESSION_ROUTING,
    SessionFlowRow,
    SessionRoutingRow,
)

# Sessions whose lineage grew since their session_flow row was built (or that have none).
PENDING_FLOW_SQL = """
WITH n AS (SELECT correlation_id, count(*) AS node_events FROM flow_nodes GROUP BY ALL),
     e AS (SELECT correlation_id, count(*) AS edge_events FROM flow_edges GROUP BY ALL),
     seen AS (
         SELECT correlation_id, coalesce(n.node_events, 0) AS node_events,
                coalesce(e.edge_events, 0) AS edge_events
         FROM n FULL OUTER JOIN e USING (correlation_id)
     )
SELECT s.correlation_id
FROM seen s LEFT JOIN session_flow f USING (correlation_id)
WHERE f.correlation_id IS NULL
   OR s.node_events > f.node_events OR s.edge_events > f.edge_events
ORDER BY s.correlation_id
"""

FLOW_NODES_SQL = """
SELECT correlation_id, node_id, occurred_at, label, slot, role, model
FROM flow_nodes WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))
"""

FLOW_EDGES_SQL = """
SELECT correlation_id, source, target, occurred_at
FROM flow_edges WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))
"""

# A turn is one llm.chat.persist event: its first message's row carries the event's usage.
PENDING_ROUTING_SQL = """
WITH turns AS (
    SELECT correlation_id, count(*) AS turns
    FROM chat_messages WHERE message_index = 0 GROUP BY correlation_id
), covered AS (
    SELECT correlation_id, max(session_turns) AS turns
    FROM session_routing GROUP BY correlation_id
)
SELECT t.correlation_id
FROM turns t LEFT JOIN covered c USING (correlation_id)
WHERE t.turns > coalesce(c.turns, 0)
ORDER BY t.correlation_id
"""

TURNS_SQL = """
SELECT correlation_id, occurred_at, slot, model, prompt_tokens, completion_tokens
FROM chat_messages
WHERE message_index = 0 AND correlation_id IN (SELECT unnest(?::VARCHAR[]))
"""

# The turns per slot of the ``?`` sessions with the newest turns: the routing check's window.
WINDOW_SQL = """
WITH recent AS (
    SELECT correlation_id, max(session_last_at) AS last_at
    FROM session_routing GROUP BY correlation_id
    ORDER BY last_at DESC, correlation_id LIMIT ?
)
SELECT r.slot, sum(r.turns)::BIGINT AS turns, list_distinct(flatten(list(r.named_as))) AS named,
       (SELECT count(*) FROM recent) AS sessions
FROM session_routing r JOIN recent USING (correlation_id)
GROUP BY r.slot
"""


def session_graphs(con: duckdb.DuckDBPyConnection, sessions: list[str]) -> dict[str, FlowGraph]:
    """The flow graphs of ``sessions`` from ``flow_nodes`` and ``flow_edges``."""
    if not sessions:
        return {}
    nodes: dict[str, list[NodeEvent]] = defaultdict(list)
    edges: dict[str, list[EdgeEvent]] = defaultdict(list)
    for cid, node_id, at, label, slot, role, model in con.execute(
        FLOW_NODES_SQL, [sessions]
    ).fetchall():
        nodes[cid].append(NodeEvent(node_id, at, label, slot, role, model))
    for cid, source, target, at in con.execute(FLOW_EDGES_SQL, [sessions]).fetchall():
        edges[cid].append(EdgeEvent(source, target, at))
    return {s: build_graph(s, nodes[s], edges[s]) for s in sessions if nodes[s] or edges[s]}


def flow_row(graph: FlowGraph) -> SessionFlowRow:
    """The ``session_flow`` row of one session's graph."""
    f = flow_figures(graph)
    times = [t for n in graph.nodes.values() for t in n.times]
    return SessionFlowRow(
        correlation_id=graph.correlation_id,
        first_at=min(times) if times else None,
        last_at=max(times) if times else None,
        node_events=f.node_events,
        edge_events=f.edge_events,
        nodes=f.nodes,
        edges=f.edges,
        roots=f.roots,
        leaves=f.leaves,
        depth=f.depth,
        max_fan_out=f.max_fan_out,
        parallel_branches=f.parallel_branches,
        uncoordinated_branches=f.uncoordinated_branches,
        uncoordinated=f.uncoordinated,
        dangling_edges=f.dangling_edges,
        cycles=f.cycles,
        slots=tuple(sorted({n.slot for n in graph.nodes.values() if n.slot})),
    )


def flow_event(row: SessionFlowRow) -> dict[str, object]:
    """The fields of a ``model_foundry.session_flow`` telemetry event for one session."""
    return {
        "correlation_id": row.correlation_id,
        "node_events": row.node_events,
        "edge_events": row.edge_events,
        "nodes": row.nodes,
        "edges": row.edges,
        "depth": row.depth,
        "max_fan_out": row.max_fan_out,
        "parallel_branches": row.parallel_branches,
        "uncoordinated": row.uncoordinated,
        "dangling_edges": row.dangling_edges,
        "cycles": row.cycles,
    }


@dataclass
class FlowRefresh:
    """What one ``session_flow`` refresh rebuilt."""

    rows: list[SessionFlowRow] = field(default_factory=list)
    graphs: dict[str, FlowGraph] = field(default_factory=dict)
    total_sessions: int = 0
    uncoordinated_sessions: int = 0

    def largest(self, count: int) -> list[FlowGraph]:
        """The ``count`` changed sessions with the most lineage events, largest first."""
        ranked = sorted(
            self.rows, key=lambda r: (-(r.node_events + r.edge_events), r.correlation_id)
        )
        return [self.graphs[r.correlation_id] for r in ranked[:count]]


def refresh_session_flow(db_path: str | Path) -> FlowRefresh:
    """Rebuild the ``session_flow`` row of every session with new lineage events."""

    def work(con: duckdb.DuckDBPyConnection) -> FlowRefresh:
        pending = [r[0] for r in con.execute(PENDING_FLOW_SQL).fetchall()]
        graphs = session_graphs(con, pending)
        rows = [flow_row(g) for g in graphs.values()]
        SESSION_FLOW.insert(con, rows, on_conflict="replace")
        totals = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE uncoordinated) FROM session_flow"
        ).fetchone()
        total, uncoordinated = totals if totals else (0, 0)
        return FlowRefresh(rows, graphs, int(total), int(uncoordinated))

    return storage.run_in_transaction(db_path, work)


def load_session_graph(db_path: str | Path, correlation_id: str) -> FlowGraph | None:
    """One session's flow graph (read-only), or ``None`` when it has no lineage events."""
    with storage.connect(db_path, read_only=True) as con:
        return session_graphs(con, [correlation_id]).get(correlation_id)


def routing_rows(turns: list[ChatTurn], slot_file: SlotFile) -> list[SessionRoutingRow]:
    """The ``session_routing`` rows of the sessions whose turns are ``turns``."""
    last_at: dict[str, datetime] = {}
    for t in turns:
        last_at[t.correlation_id] = max(last_at.get(t.correlation_id, t.occurred_at), t.occurred_at)
    return [
        SessionRoutingRow(
            correlation_id=s.correlation_id,
            day=s.day,
            slot=s.slot,
            roles=s.roles,
            model=s.model,
            turns=s.turns,
            prompt_tokens=s.prompt_tokens,
            completion_tokens=s.completion_tokens,
            share=s.share,
            session_turns=s.session_turns,
            session_last_at=last_at[s.correlation_id],
            named_as=s.named_as,
        )
        for s in session_shares(turns, slot_file)
    ]


def turns_by_slot(rows: list[SessionRoutingRow]) -> dict[str, int]:
    """Turns per slot over ``rows``, busiest first."""
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row.slot] += row.turns
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class RoutingRefresh:
    """What one ``session_routing`` refresh rebuilt."""

    sessions: list[str] = field(default_factory=list)
    rows: list[SessionRoutingRow] = field(default_factory=list)
    total_rows: int = 0


def refresh_session_routing(db_path: str | Path, slot_file: SlotFile) -> RoutingRefresh:
    """Rebuild the ``session_routing`` rows of every session with new chat turns."""

    def work(con: duckdb.DuckDBPyConnection) -> RoutingRefresh:
        pending = [r[0] for r in con.execute(PENDING_ROUTING_SQL).fetchall()]
        if not pending:
            found = con.execute("SELECT count(*) FROM session_routing").fetchone()
            return RoutingRefresh(total_rows=int(found[0]) if found else 0)
        turns = [
            ChatTurn(cid, at, slot, model, prompt, completion)
            for cid, at, slot, model, prompt, completion in con.execute(
                TURNS_SQL, [pending]
            ).fetchall()
        ]
        rows = routing_rows(turns, slot_file)
        # A session's days and slots can change as it grows: its old rows go, all of them.
        con.execute(
            "DELETE FROM session_routing WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))",
            [pending],
        )
        SESSION_ROUTING.insert(con, rows)
        found = con.execute("SELECT count(*) FROM session_routing").fetchone()
        return RoutingRefresh(pending, rows, int(found[0]) if found else 0)

    return storage.run_in_transaction(db_path, work)


def recent_verdict(
    db_path: str | Path, slot_file: SlotFile, sessions: int, profile: str | None = None
) -> RoutingVerdict:
    """The routing verdict over the ``sessions`` sessions with the newest turns."""
    with storage.connect(db_path, read_only=True) as con:
        found = con.execute(WINDOW_SQL, [sessions]).fetchall()
    counts = {slot: int(turns) for slot, turns, _, _ in found}
    named = sorted({n for _, _, names, _ in found for n in (names or [])})
    seen = int(found[0][3]) if found else 0
    return verdict_from_counts(counts, seen, named, slot_file, profile)


__all__ = [
    "FlowRefresh",
    "RoutingRefresh",
    "flow_event",
    "flow_row",
    "load_session_graph",
    "recent_verdict",
    "refresh_session_flow",
    "refresh_session_routing",
    "routing_rows",
    "session_graphs",
    "turns_by_slot",
]
