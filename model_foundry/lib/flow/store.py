"""Reading the typed tables for sessions' flow and routing, and writing ``session_flow`` and
``session_routing``.

Each refresh reads the inbox commits after its step's position (``lib/inbox/commit_spans.py``),
but no further than the typed tables' own step has taken in, so every session it finds there
is already whole in ``flow_nodes`` / ``flow_edges`` (or ``chat_messages``). Only the sessions
those commits name are rebuilt, whole, and their rows replaced; the rows and the new position
are written in one short transaction. Drawing pictures happens after it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.events import CHAT_PERSIST, FLOW_LINEAGE
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
from model_foundry.lib.inbox import commit_spans
from model_foundry.lib.inbox.typed import STEP as TYPED_TABLES_STEP
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.tables.sessions import (
    SESSION_FLOW,
    SESSION_ROUTING,
    SessionFlowRow,
    SessionRoutingRow,
)

# The sessions a span of inbox commits has events of one subject for.
SPAN_SESSIONS_SQL = f"""
SELECT DISTINCT i.correlation_id
FROM pipeline_event_inbox i
WHERE {commit_spans.IN_SPAN} AND i.subject = ?
ORDER BY 1
"""

FLOW_STEP = "session_flow"
ROUTING_STEP = "session_routing"

FLOW_NODES_SQL = """
SELECT correlation_id, node_id, occurred_at, label, slot, role, model
FROM flow_nodes WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))
"""

FLOW_EDGES_SQL = """
SELECT correlation_id, source, target, occurred_at
FROM flow_edges WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))
"""

# A turn is one llm.chat.persist event: its first message's row carries the event's usage.
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


def _span(con: duckdb.DuckDBPyConnection, step: str) -> commit_spans.Span:
    """What ``step`` has not read yet, up to what the typed tables have taken in."""
    wanted = commit_spans.span(con, step)
    return commit_spans.Span(
        step, wanted.after, min(wanted.upto, commit_spans.position(con, TYPED_TABLES_STEP))
    )


def _span_sessions(
    con: duckdb.DuckDBPyConnection, span: commit_spans.Span, subject: str
) -> list[str]:
    if span.empty:
        return []
    return [r[0] for r in con.execute(SPAN_SESSIONS_SQL, [*span.params, subject]).fetchall()]


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
        span = _span(con, FLOW_STEP)
        graphs = session_graphs(con, _span_sessions(con, span, FLOW_LINEAGE))
        rows = [flow_row(g) for g in graphs.values()]
        SESSION_FLOW.insert(con, rows, on_conflict="replace")
        if not span.empty:
            commit_spans.advance(con, span)
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
        span = _span(con, ROUTING_STEP)
        pending = _span_sessions(con, span, CHAT_PERSIST)
        if not span.empty:
            commit_spans.advance(con, span)
        if not pending:
            found = con.execute("SELECT count(*) FROM session_routing").fetchone()
            return RoutingRefresh(total_rows=int(found[0]) if found else 0)
        turns = [
            ChatTurn(cid, at, slot, model, prompt, completion)
            for cid, at, slot, model, prompt, completion in con.execute(
                TURNS_SQL, [pending]
            ).fetchall()
        ]
        rows = session_shares(turns, slot_file)
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
    "session_graphs",
    "turns_by_slot",
]
