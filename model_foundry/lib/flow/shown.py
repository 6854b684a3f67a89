"""What of a flow graph a picture shows: repeated chains collapsed, the node count capped.

A session of thousands of steps stays readable: a chain of steps with the same colour and
label (``tool_call -> tool_call -> ...`` on one slot) becomes one node marked ``xN``, and when
the graph is still larger than the cap, only its earliest nodes are shown, with a note
saying how many were left out. Pure logic: the drawing lives in ``render.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import networkx as nx

from model_foundry.lib.flow.graph import FlowGraph, FlowNode, cycle_groups, forks

DEFAULT_MAX_NODES = 300


@dataclass(slots=True)
class ShownNode:
    """One node of the picture: a graph node, or a collapsed chain of them."""

    node_id: str
    text: str
    colour_key: str
    first_at: datetime | None
    members: int = 1
    known: bool = True
    uncoordinated: bool = False


@dataclass(slots=True)
class ShownGraph:
    """The graph a picture draws, and what was left out of it."""

    digraph: nx.DiGraph
    nodes: dict[str, ShownNode]
    graph_nodes: int
    collapsed_chains: int = 0
    cut_nodes: int = 0
    cycle_edges: set[tuple[str, str]] = field(default_factory=set)

    @property
    def note(self) -> str | None:
        """What the picture leaves out, in one sentence, or ``None`` when it shows all."""
        parts = []
        if self.collapsed_chains:
            parts.append(
                f"{self.collapsed_chains:,} repeated chain"
                f"{'s' if self.collapsed_chains > 1 else ''} collapsed (xN)"
            )
        if self.cut_nodes:
            shown = self.digraph.number_of_nodes()
            parts.append(
                f"node count capped: showing the earliest {shown:,} of "
                f"{shown + self.cut_nodes:,} nodes"
            )
        if not parts:
            return None
        return f"{'; '.join(parts)} ({self.graph_nodes:,} nodes in the session)"


def _text(node: FlowNode, limit: int = 18) -> str:
    text = node.label or node.node_id.rsplit("/", 1)[-1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _chain_links(graph: FlowGraph) -> dict[str, str]:
    """``u -> v`` for each link inside a repeated chain: a straight run of alike nodes."""
    g = graph.digraph
    # A cycle's nodes stay apart, or collapsing would hide the cycle in one node.
    in_cycles = set().union(*cycle_groups(g))
    links = {}
    for u, v in g.edges:
        if u in in_cycles or g.out_degree(u) != 1 or g.in_degree(v) != 1:
            continue
        a, b = graph.nodes[u], graph.nodes[v]
        if a.known and b.known and (a.colour_key, a.label) == (b.colour_key, b.label):
            links[u] = v
    return links


def _chains(graph: FlowGraph) -> dict[str, list[str]]:
    """Each chain's head and its members in order; a ring of links has no head and stays."""
    links = _chain_links(graph)
    has_link_in = set(links.values())
    chains = {}
    for head in links:
        if head in has_link_in:
            continue
        members = [head]
        while members[-1] in links:
            members.append(links[members[-1]])
        chains[head] = members
    return chains


def _collapse(graph: FlowGraph, uncoordinated: set[str]) -> ShownGraph:
    owner = {n: n for n in graph.digraph.nodes}
    chains = _chains(graph)
    for head, members in chains.items():
        for member in members:
            owner[member] = head
    shown: dict[str, ShownNode] = {}
    for node_id, node in graph.nodes.items():
        head = owner[node_id]
        if head != node_id:
            continue
        members = chains.get(head, [head])
        count = len(members)
        shown[head] = ShownNode(
            node_id=head,
            text=_text(node) + (f" x{count}" if count > 1 else ""),
            colour_key=node.colour_key,
            first_at=node.first_at,
            members=count,
            known=node.known,
            uncoordinated=any(m in uncoordinated for m in members),
        )
    digraph: nx.DiGraph = nx.DiGraph()
    digraph.add_nodes_from(sorted(shown, key=lambda n: _when(shown[n])))
    digraph.add_edges_from(
        (owner[u], owner[v]) for u, v in graph.digraph.edges if owner[u] != owner[v]
    )
    group = {n: i for i, nodes in enumerate(cycle_groups(graph.digraph)) for n in nodes}
    cycle_edges = {
        (owner[u], owner[v])
        for u, v in graph.digraph.edges
        if u in group and group[u] == group.get(v)
    }
    return ShownGraph(digraph, shown, graph.digraph.number_of_nodes(), len(chains), 0, cycle_edges)


def _when(node: ShownNode) -> tuple[int, datetime | str]:
    # Nodes without a time (edges to unknown nodes without times) sort last, by id.
    return (0, node.first_at) if node.first_at is not None else (1, node.node_id)


def shown_graph(graph: FlowGraph, max_nodes: int = DEFAULT_MAX_NODES) -> ShownGraph:
    """The graph a picture of ``graph`` draws, at most ``max_nodes`` nodes."""
    uncoordinated = {c for fork in forks(graph) for c in fork.uncoordinated}
    shown = _collapse(graph, uncoordinated)
    if shown.digraph.number_of_nodes() <= max_nodes:
        return shown
    keep = sorted(shown.nodes.values(), key=_when)[: max(1, max_nodes)]
    kept = {n.node_id for n in keep}
    shown.cut_nodes = shown.digraph.number_of_nodes() - len(kept)
    shown.digraph = shown.digraph.subgraph(n.node_id for n in keep).copy()
    shown.nodes = {n: shown.nodes[n] for n in kept}
    shown.cycle_edges = {(u, v) for u, v in shown.cycle_edges if u in kept and v in kept}
    return shown


__all__ = ["DEFAULT_MAX_NODES", "ShownGraph", "ShownNode", "shown_graph"]
