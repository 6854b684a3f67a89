"""A session's flow graph, built from its lineage events, and the figures that describe it.

The familiar publishes ``llm.flow.lineage`` events: ``node`` events (a step, with a label and
often the ``slot``, ``role`` and ``model`` that ran it) and ``edge`` events (``source`` ->
``target``). :func:`build_graph` turns a session's events into a :class:`FlowGraph`;
:func:`flow_figures` measures it: size, depth, the widest fan-out, parallel branches (children
of one node whose work interleaves in time) and uncoordinated parallel work (parallel branches
that never meet again). Edges to nodes that never had a node event, and cycles, are counted
and kept, never dropped. Pure logic: no DuckDB, no Dagster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

import networkx as nx

# The node attributes that say who did a step, in the order a colour is chosen from them.
WHO_KEYS: tuple[str, ...] = ("slot", "role", "model")
# Parallel branches shorter than this are a quick fan-out (tool calls side by side), not work
# going its own way: they are parallel, but never called uncoordinated. It also keeps a live
# session's newest steps, whose branches have had no time to meet yet, from being flagged.
MIN_UNCOORDINATED_STEPS = 3


@dataclass(frozen=True, slots=True)
class NodeEvent:
    """One ``kind: node`` lineage event."""

    node_id: str
    occurred_at: datetime
    label: str | None = None
    slot: str | None = None
    role: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class EdgeEvent:
    """One ``kind: edge`` lineage event."""

    source: str
    target: str
    occurred_at: datetime


@dataclass(slots=True)
class FlowNode:
    """A node as the graph keeps it: what its events said, and when they happened."""

    node_id: str
    label: str | None = None
    slot: str | None = None
    role: str | None = None
    model: str | None = None
    # False for a node that only edges name: an edge to an unknown node.
    known: bool = True
    times: list[datetime] = field(default_factory=list)

    @property
    def colour_key(self) -> str:
        """What the node is coloured by: its slot, role or model, else its label."""
        if not self.known:
            return "unknown node"
        for key in WHO_KEYS:
            value = getattr(self, key)
            if value:
                return f"{key}: {value}"
        return f"label: {self.label}" if self.label else "label: (none)"

    @property
    def first_at(self) -> datetime | None:
        return min(self.times) if self.times else None


@dataclass(slots=True)
class FlowGraph:
    """A session's lineage as a directed graph, with the event counts it came from."""

    correlation_id: str
    digraph: nx.DiGraph
    nodes: dict[str, FlowNode]
    node_events: int = 0
    edge_events: int = 0
    # Edge events (not distinct edges) that name a node without a node event.
    dangling_edge_events: int = 0


def build_graph(
    correlation_id: str, nodes: Iterable[NodeEvent], edges: Iterable[EdgeEvent]
) -> FlowGraph:
    """The graph of one session's lineage events, in any order.

    A node with several node events keeps its first label and the latest slot, role and
    model any of them named. An edge's time counts towards its target: the target's work
    happened when the edge appeared, even if its node event came later or never.
    """
    digraph: nx.DiGraph = nx.DiGraph()
    table: dict[str, FlowNode] = {}
    graph = FlowGraph(correlation_id, digraph, table)
    for event in sorted(nodes, key=lambda e: e.occurred_at):
        graph.node_events += 1
        node = table.setdefault(event.node_id, FlowNode(event.node_id))
        node.label = node.label or event.label
        for key in WHO_KEYS:
            value = getattr(event, key)
            if value:
                setattr(node, key, value)
        node.times.append(event.occurred_at)
        digraph.add_node(event.node_id)
    edge_list = list(edges)
    for event in edge_list:
        graph.edge_events += 1
        for end in (event.source, event.target):
            if end not in table:
                table[end] = FlowNode(end, known=False)
                digraph.add_node(end)
        if not (table[event.source].known and table[event.target].known):
            graph.dangling_edge_events += 1
        table[event.target].times.append(event.occurred_at)
        digraph.add_edge(event.source, event.target)
    return graph


@dataclass(frozen=True, slots=True)
class FlowFigures:
    """What a session's flow looked like, as numbers (one ``session_flow`` row's figures)."""

    node_events: int
    edge_events: int
    nodes: int
    edges: int
    roots: int
    leaves: int
    depth: int
    max_fan_out: int
    parallel_forks: int
    parallel_branches: int
    uncoordinated_branches: int
    unknown_nodes: int
    dangling_edges: int
    cycles: int
    cycle_nodes: int

    @property
    def uncoordinated(self) -> bool:
        return self.uncoordinated_branches > 0

    @property
    def has_cycle(self) -> bool:
        return self.cycles > 0


@dataclass(frozen=True, slots=True)
class Fork:
    """A node whose children ran in parallel, and which of them never met again."""

    node_id: str
    parallel: tuple[str, ...]
    uncoordinated: tuple[str, ...]


def depth(digraph: nx.DiGraph) -> int:
    """Nodes on the longest path; a cycle counts as one step (its nodes collapse into one)."""
    if digraph.number_of_nodes() == 0:
        return 0
    dag = nx.condensation(digraph)
    return int(nx.dag_longest_path_length(dag)) + 1


def _span(graph: FlowGraph, members: Iterable[str]) -> tuple[datetime, datetime] | None:
    times = [t for n in members for t in graph.nodes[n].times]
    return (min(times), max(times)) if times else None


def _overlaps(a: tuple[datetime, datetime], b: tuple[datetime, datetime]) -> bool:
    # Strict: a branch that starts the instant another ends ran after it, not beside it.
    return a[0] < b[1] and b[0] < a[1]


def _fork(graph: FlowGraph, node_id: str, children: list[str]) -> Fork | None:
    """Which children of ``node_id`` ran in parallel, and which of those never met again.

    Two branches ran in parallel when the events only each of them reached interleave in
    time; they are uncoordinated when their subtrees share no node at all (so no edge runs
    between them either, or one would reach into the other) and each is a real branch of
    at least ``MIN_UNCOORDINATED_STEPS`` steps.
    """
    subtree = {c: nx.descendants(graph.digraph, c) | {c} for c in children}
    whole = {c: span for c in children if (span := _span(graph, subtree[c])) is not None}
    # Branches sorted by start: a pair whose whole subtrees do not overlap cannot interleave,
    # so each branch is compared only with those that start before it ends.
    by_start = sorted(whole, key=lambda c: whole[c][0])
    parallel: set[str] = set()
    uncoordinated: set[str] = set()
    for i, a in enumerate(by_start):
        for b in by_start[i + 1 :]:
            if whole[b][0] >= whole[a][1]:
                break
            span_a = _span(graph, subtree[a] - subtree[b])
            span_b = _span(graph, subtree[b] - subtree[a])
            if span_a is None or span_b is None or not _overlaps(span_a, span_b):
                continue
            parallel.update((a, b))
            shortest = min(len(subtree[a]), len(subtree[b]))
            if shortest >= MIN_UNCOORDINATED_STEPS and subtree[a].isdisjoint(subtree[b]):
                uncoordinated.update((a, b))
    if not parallel:
        return None
    order = {c: i for i, c in enumerate(children)}
    return Fork(
        node_id,
        tuple(sorted(parallel, key=order.__getitem__)),
        tuple(sorted(uncoordinated, key=order.__getitem__)),
    )


def forks(graph: FlowGraph) -> list[Fork]:
    """Every node with children that ran in parallel, in the order the nodes first appeared."""
    found = []
    for node_id in graph.digraph.nodes:
        children = sorted(graph.digraph.successors(node_id))
        if len(children) > 1:
            fork = _fork(graph, node_id, children)
            if fork is not None:
                found.append(fork)
    return found


def cycle_groups(digraph: nx.DiGraph) -> list[set[str]]:
    """The node sets that form cycles: strongly connected groups of two or more, self-loops."""
    groups = [set(c) for c in nx.strongly_connected_components(digraph) if len(c) > 1]
    groups.extend({n} for n in nx.nodes_with_selfloops(digraph))
    return groups


def flow_figures(graph: FlowGraph) -> FlowFigures:
    """Measure a session's flow graph."""
    g = graph.digraph
    found = forks(graph)
    cycles = cycle_groups(g)
    unknown = {n for n, node in graph.nodes.items() if not node.known}
    return FlowFigures(
        node_events=graph.node_events,
        edge_events=graph.edge_events,
        nodes=g.number_of_nodes(),
        edges=g.number_of_edges(),
        roots=sum(1 for _, d in g.in_degree() if d == 0),
        leaves=sum(1 for _, d in g.out_degree() if d == 0),
        depth=depth(g),
        max_fan_out=max((d for _, d in g.out_degree()), default=0),
        parallel_forks=len(found),
        parallel_branches=sum(len(f.parallel) for f in found),
        uncoordinated_branches=sum(len(f.uncoordinated) for f in found),
        unknown_nodes=len(unknown),
        dangling_edges=sum(1 for s, t in g.edges if s in unknown or t in unknown),
        cycles=len(cycles),
        cycle_nodes=len(set().union(*cycles)) if cycles else 0,
    )


def relabelled(graph: FlowGraph, text: Callable[[str], str]) -> FlowGraph:
    """A copy of ``graph`` whose nodes' label, slot, role and model went through ``text``;
    ids, edges, times and counts stay. A picture shown outside DuckDB draws this one."""
    nodes = {
        node_id: replace(
            node,
            times=list(node.times),
            **{key: text(value) for key in ("label", *WHO_KEYS) if (value := getattr(node, key))},
        )
        for node_id, node in graph.nodes.items()
    }
    return replace(graph, nodes=nodes)


__all__ = [
    "MIN_UNCOORDINATED_STEPS",
    "WHO_KEYS",
    "EdgeEvent",
    "FlowFigures",
    "FlowGraph",
    "FlowNode",
    "Fork",
    "NodeEvent",
    "build_graph",
    "cycle_groups",
    "depth",
    "flow_figures",
    "forks",
    "relabelled",
]
