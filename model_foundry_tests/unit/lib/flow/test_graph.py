"""Flow figures on hand-built graphs: each figure can be checked by eye against the drawing."""

from datetime import UTC, datetime, timedelta

from model_foundry.lib.flow.graph import (
    EdgeEvent,
    NodeEvent,
    build_graph,
    flow_figures,
    forks,
)

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def at(second: float) -> datetime:
    return T0 + timedelta(seconds=second)


def chain_events(
    edges: list[tuple[str, str, float]], nodes: dict[str, float] | None = None
) -> tuple[list[NodeEvent], list[EdgeEvent]]:
    """Node events at the given times (default: the time of the edge into them, root at 0)."""
    times = dict(nodes or {})
    for source, target, when in edges:
        times.setdefault(target, when)
        times.setdefault(source, 0.0)
    node_events = [NodeEvent(n, at(t), label="step") for n, t in times.items()]
    edge_events = [EdgeEvent(s, t, at(w)) for s, t, w in edges]
    return node_events, edge_events


def test_a_chain_has_depth_of_its_nodes_and_no_parallel_work() -> None:
    nodes, edges = chain_events([("a", "b", 1), ("b", "c", 2), ("c", "d", 3)])
    f = flow_figures(build_graph("s", nodes, edges))
    assert (f.node_events, f.edge_events, f.nodes, f.edges) == (4, 3, 4, 3)
    assert (f.roots, f.leaves, f.depth, f.max_fan_out) == (1, 1, 4, 1)
    assert (f.parallel_branches, f.uncoordinated, f.has_cycle) == (0, False, False)


def test_node_and_edge_events_are_counted_apart_from_distinct_nodes_and_edges() -> None:
    nodes, edges = chain_events([("a", "b", 1)])
    # The familiar re-sends a node when its step is updated, and an edge can repeat.
    nodes.append(NodeEvent("b", at(5), label="step", slot="naughty"))
    edges.append(EdgeEvent("a", "b", at(6)))
    graph = build_graph("s", nodes, edges)
    f = flow_figures(graph)
    assert (f.node_events, f.edge_events, f.nodes, f.edges) == (3, 2, 2, 1)
    assert graph.nodes["b"].colour_key == "slot: naughty"


def test_interleaved_workers_that_never_join_are_parallel_and_uncoordinated() -> None:
    # plan -> three workers, each a chain of 3 steps, taking turns in time; never joined.
    edges = []
    for step in range(3):
        for worker in range(3):
            source = "plan" if step == 0 else f"w{worker}.{step - 1}"
            edges.append((source, f"w{worker}.{step}", 1 + step * 3 + worker))
    graph = build_graph("s", *chain_events(edges))
    f = flow_figures(graph)
    assert (f.depth, f.max_fan_out, f.roots, f.leaves) == (4, 3, 1, 3)
    assert (f.parallel_forks, f.parallel_branches, f.uncoordinated_branches) == (1, 3, 3)
    assert f.uncoordinated
    assert forks(graph)[0].node_id == "plan"


def test_parallel_branches_that_join_again_are_coordinated() -> None:
    edges = [
        ("plan", "a1", 1), ("plan", "b1", 2), ("a1", "a2", 3), ("b1", "b2", 4),
        ("a2", "merge", 5), ("b2", "merge", 6),
    ]  # fmt: skip
    f = flow_figures(build_graph("s", *chain_events(edges)))
    assert (f.parallel_branches, f.uncoordinated_branches) == (2, 0)
    assert not f.uncoordinated
    assert f.depth == 4


def test_an_edge_between_branches_coordinates_them() -> None:
    edges = [("plan", "a1", 1), ("plan", "b1", 2), ("a1", "a2", 3), ("b1", "b2", 4)]
    edges.append(("a1", "b2", 4.5))
    f = flow_figures(build_graph("s", *chain_events(edges)))
    assert f.parallel_branches == 2
    assert f.uncoordinated_branches == 0


def test_branches_one_after_the_other_are_not_parallel() -> None:
    # The second branch starts only after the first one's last step.
    edges = [("plan", "a1", 1), ("a1", "a2", 2), ("plan", "b1", 3), ("b1", "b2", 4)]
    f = flow_figures(build_graph("s", *chain_events(edges)))
    assert f.max_fan_out == 2
    assert (f.parallel_forks, f.parallel_branches, f.uncoordinated) == (0, 0, False)


def test_only_the_interleaving_pair_of_three_children_is_parallel() -> None:
    edges = [
        ("plan", "a1", 1), ("plan", "b1", 2), ("a1", "a2", 3), ("b1", "b2", 4),
        ("plan", "c1", 10), ("c1", "c2", 11),
    ]  # fmt: skip
    graph = build_graph("s", *chain_events(edges))
    assert forks(graph)[0].parallel == ("a1", "b1")
    assert flow_figures(graph).parallel_branches == 2


def test_edges_to_unknown_nodes_are_flagged_and_kept() -> None:
    nodes, edges = chain_events([("a", "b", 1)])
    edges.append(EdgeEvent("b", "ghost", at(2)))
    edges.append(EdgeEvent("phantom", "a", at(3)))
    graph = build_graph("s", nodes, edges)
    f = flow_figures(graph)
    assert (f.nodes, f.edges, f.unknown_nodes, f.dangling_edges) == (4, 3, 2, 2)
    assert graph.dangling_edge_events == 2
    assert graph.nodes["ghost"].colour_key == "unknown node"
    # phantom is now the root, ghost the leaf: the graph was not cut at the unknown nodes.
    assert (f.roots, f.leaves, f.depth) == (1, 1, 4)


def test_cycles_are_flagged_and_depth_still_finite() -> None:
    edges = [("a", "b", 1), ("b", "c", 2), ("c", "b", 3), ("c", "d", 4), ("d", "d", 5)]
    f = flow_figures(build_graph("s", *chain_events(edges)))
    assert f.has_cycle
    assert (f.cycles, f.cycle_nodes) == (2, 3)
    # a, {b, c}, {d}: the cycle counts as one step.
    assert f.depth == 3


def test_an_empty_session_has_zero_figures() -> None:
    f = flow_figures(build_graph("s", [], []))
    assert (f.nodes, f.edges, f.depth, f.max_fan_out, f.roots, f.leaves) == (0, 0, 0, 0, 0, 0)


def test_colour_key_prefers_slot_then_role_then_model_then_label() -> None:
    nodes = [
        NodeEvent("a", at(0), label="plan", slot="grandpa", role="reasoning", model="glm"),
        NodeEvent("b", at(1), label="work", role="worker", model="gemma"),
        NodeEvent("c", at(2), label="work", model="gemma"),
        NodeEvent("d", at(3), label="tool_call"),
    ]
    graph = build_graph("s", nodes, [])
    assert [graph.nodes[n].colour_key for n in "abcd"] == [
        "slot: grandpa",
        "role: worker",
        "model: gemma",
        "label: tool_call",
    ]


def test_a_quick_fan_out_of_single_steps_is_parallel_but_not_uncoordinated() -> None:
    # Three tool calls side by side, each one step: interleaved, never joined.
    nodes = [NodeEvent("plan", at(0), label="plan")]
    nodes += [NodeEvent(f"t{i}", at(1 + i), label="tool_call") for i in range(3)]
    edges = [EdgeEvent("plan", f"t{i}", at(1 + i)) for i in range(3)]
    # Each tool call's result lands after the others started: their spans interleave.
    nodes += [NodeEvent(f"t{i}", at(5 + i), label="tool_call") for i in range(3)]
    f = flow_figures(build_graph("s", nodes, edges))
    assert (f.parallel_branches, f.uncoordinated_branches) == (3, 0)
