"""Flow pictures: real SVG and PNG files, parsed back, that keep to the node cap and size."""

import base64
import io
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image

from model_foundry.lib.flow.graph import (
    EdgeEvent,
    FlowGraph,
    NodeEvent,
    build_graph,
    flow_figures,
    relabelled,
)
from model_foundry.lib.flow.render import (
    MAX_METADATA_BYTES,
    layered_positions,
    picture_for_metadata,
    render,
    write_picture,
)
from model_foundry.lib.flow.shown import DEFAULT_MAX_NODES, shown_graph

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
SVG = "{http://www.w3.org/2000/svg}"


def workers_graph(workers: int = 3, steps: int = 6) -> FlowGraph:
    """plan -> ``workers`` interleaved chains of alternating chat / tool steps, never joined."""
    nodes = [NodeEvent("plan", T0, label="plan", slot="grandpa")]
    edges = []
    for step in range(steps):
        for w in range(workers):
            when = T0 + timedelta(seconds=1 + step * workers + w)
            node = f"w{w}.{step}"
            nodes.append(NodeEvent(node, when, label="chat" if step % 2 else "tool_call",
                                   slot="naughty"))  # fmt: skip
            edges.append(EdgeEvent("plan" if step == 0 else f"w{w}.{step - 1}", node, when))
    return build_graph("sess-workers", nodes, edges)


def big_graph(count: int = 2000) -> FlowGraph:
    """A session of ``count`` steps: 4 workers, runs of repeated tool calls, a few joins."""
    nodes, edges = [NodeEvent("root", T0, label="plan", slot="grandpa")], []
    last = ["root"] * 4
    for i in range(count - 1):
        w = i % 4
        node, when = f"n{i}", T0 + timedelta(seconds=i + 1)
        label = "tool_call" if (i // 4) % 5 else "chat"
        nodes.append(NodeEvent(node, when, label=label, slot=["naughty", "kindergarten"][w % 2]))
        edges.append(EdgeEvent(last[w], node, when))
        if i % 97 == 0 and w:
            edges.append(EdgeEvent(last[w - 1], node, when))
        last[w] = node
    return build_graph("sess-big", nodes, edges)


def drawn_nodes(svg: bytes) -> int:
    root = ET.fromstring(svg)
    groups = [g for g in root.iter(f"{SVG}g") if g.get("id") == "flow-nodes"]
    assert len(groups) == 1
    return sum(1 for el in groups[0].iter() if el.tag in (f"{SVG}path", f"{SVG}use"))


def test_a_small_graph_shows_every_node_with_a_legend() -> None:
    graph = workers_graph()
    svg = render(graph, "svg")
    text = svg.decode()
    # Repeated chains: none here, chat and tool_call alternate, so every node is drawn.
    assert drawn_nodes(svg) == 19
    for entry in ("slot: naughty", "slot: grandpa", "uncoordinated branch"):
        assert entry in text
    assert "3 parallel branches (3 uncoordinated)" in text


def test_parallel_branches_take_lanes_side_by_side() -> None:
    shown = shown_graph(workers_graph())
    pos = layered_positions(shown.digraph)
    first_steps = [pos[f"w{w}.0"] for w in range(3)]
    # Same column, three different lanes; each worker's chain stays on its own lane.
    assert len({x for x, _ in first_steps}) == 1
    assert len({y for _, y in first_steps}) == 3
    for w in range(3):
        assert {pos[f"w{w}.{s}"][1] for s in range(6)} == {pos[f"w{w}.0"][1]}


def test_repeated_chains_collapse_into_one_node() -> None:
    nodes = [NodeEvent(f"t{i}", T0 + timedelta(seconds=i), label="tool_call") for i in range(12)]
    nodes.append(NodeEvent("end", T0 + timedelta(seconds=20), label="answer"))
    edges = [EdgeEvent(f"t{i}", f"t{i + 1}", T0 + timedelta(seconds=i + 1)) for i in range(11)]
    edges.append(EdgeEvent("t11", "end", T0 + timedelta(seconds=20)))
    shown = shown_graph(build_graph("s", nodes, edges))
    assert [n.text for n in shown.nodes.values()] == ["tool_call x12", "answer"]
    assert shown.note == "1 repeated chain collapsed (xN) (13 nodes in the session)"


def test_cycles_and_unknown_nodes_are_drawn_not_dropped() -> None:
    nodes = [NodeEvent(n, T0 + timedelta(seconds=i), label="step") for i, n in enumerate("abc")]
    edges = [EdgeEvent(s, t, T0 + timedelta(seconds=5)) for s, t in ("ab", "bc", "cb", "cz")]
    graph = build_graph("s", nodes, edges)
    shown = shown_graph(graph)
    assert set(shown.digraph.nodes) == {"a", "b", "c", "z"}
    assert shown.cycle_edges == {("b", "c"), ("c", "b")}
    text = render(graph, "svg").decode()
    assert "edge in a cycle" in text and "unknown node (edge only)" in text


def test_a_2000_node_session_renders_within_the_cap_as_valid_images(tmp_path: Path) -> None:
    graph = big_graph()
    assert graph.digraph.number_of_nodes() == 2000
    svg_path = write_picture(graph, tmp_path / "flow.svg")
    png_path = write_picture(graph, tmp_path / "flow.png")
    svg = svg_path.read_bytes()
    assert len(svg) >= 2048 and len(png_path.read_bytes()) >= 2048
    assert 0 < drawn_nodes(svg) <= DEFAULT_MAX_NODES
    assert "node count capped: showing the earliest" in svg.decode()
    with Image.open(png_path) as image:
        image.verify()
        assert image.format == "PNG"
    with Image.open(png_path) as image:
        assert image.width > 200 and image.height > 200


def test_the_markdown_metadata_embeds_the_picture_under_the_limit() -> None:
    picture = picture_for_metadata(big_graph())
    assert picture is not None
    assert len(picture.markdown) <= MAX_METADATA_BYTES
    match = re.fullmatch(r"!\[flow of sess-big\]\(data:image/(svg\+xml|png);base64,(.+)\)",
                         picture.markdown)  # fmt: skip
    assert match is not None
    embedded = base64.b64decode(match.group(2))
    assert embedded == picture.image and len(embedded) >= 2048
    if picture.fmt == "svg":
        assert drawn_nodes(embedded) <= DEFAULT_MAX_NODES
    else:
        Image.open(io.BytesIO(embedded)).verify()


def test_a_tight_limit_falls_back_to_a_smaller_png() -> None:
    picture = picture_for_metadata(big_graph(), limit=150_000)
    assert picture is not None and picture.fmt == "png"
    assert len(picture.markdown) <= 150_000
    assert picture_for_metadata(big_graph(), limit=1_000) is None


def test_only_svg_and_png_are_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.svg or \.png"):
        write_picture(workers_graph(), tmp_path / "flow.jpg")


def test_a_relabelled_graph_draws_only_the_new_text_and_keeps_its_shape() -> None:
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    nodes = [
        NodeEvent("plan", T0, label=f"push with {token}", slot="grandpa"),
        NodeEvent("a", T0 + timedelta(seconds=1), label="chat", slot=f"slot-{token}"),
        NodeEvent("b", T0 + timedelta(seconds=2), label=token, model=token),
    ]
    edges = [EdgeEvent("plan", "a", T0), EdgeEvent("plan", "b", T0), EdgeEvent("b", "c", T0)]
    graph = build_graph("sess-planted", nodes, edges)
    # Node text (cut to 18 characters) and the legend (whole) carry what the events said.
    assert token in render(graph, "svg").decode()
    shown = relabelled(graph, lambda text: text.replace(token, "[REDACTED:github_token]"))
    svg = render(shown, "svg").decode()
    assert token[4:16] not in svg and "model: [REDACTED:github_token]" in svg
    assert "push with [REDAC" in svg
    # Ids, edges, times and the figures stay; the graph drawn from is left as it was.
    assert list(shown.digraph.edges) == list(graph.digraph.edges)
    assert shown.nodes["c"].known is False and shown.nodes["a"].times == graph.nodes["a"].times
    assert flow_figures(shown) == flow_figures(graph)
    assert graph.nodes["b"].label == token
