"""A picture of a session's flow: a layered layout drawn with matplotlib, SVG or PNG.

Steps flow left to right, one column per depth, so the children of a fork stand one above the
other and parallel branches run side by side as lanes. Nodes are coloured by the slot, role
or model their node event named, else by label, with a legend; an uncoordinated branch's
first step has a thick red ring, edges to unknown nodes are dashed and a cycle's edges red.
The layout is pure Python, so it works on any machine pip can set up. matplotlib runs on its
Agg canvas without pyplot: nothing global changes and no display is needed.
"""

from __future__ import annotations

import base64
import io
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import matplotlib
import networkx as nx
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from model_foundry.lib.flow.graph import FlowGraph, flow_figures
from model_foundry.lib.flow.shown import DEFAULT_MAX_NODES, ShownGraph, shown_graph

Format = Literal["svg", "png"]
FORMATS: tuple[Format, ...] = ("svg", "png")
# What one picture may weigh in materialization metadata, as the data URI that carries it.
MAX_METADATA_BYTES = 500_000
# Beyond this many colour keys the rest share one grey entry in the legend.
MAX_LEGEND_KEYS = 16
UNKNOWN_COLOUR = "#c8c8c8"
OTHER_COLOUR = "#8c8c8c"
UNCOORDINATED_RING = "#d62728"
CYCLE_EDGE = "#d62728"
_MIME = {"svg": "image/svg+xml", "png": "image/png"}


def layered_positions(digraph: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """x: the node's depth (a cycle's nodes share one); y: its lane within that depth.

    Nodes are taken in the digraph's order (``shown_graph`` sorts it by time). Each node asks
    for the mean lane of its placed parents and gets the nearest free lane at or below it,
    so a chain stays on one lane and a fork's children take the lanes beneath.
    """
    if digraph.number_of_nodes() == 0:
        return {}
    dag = nx.condensation(digraph)
    member_of = dag.graph["mapping"]
    column: dict[int, int] = {}
    for comp in nx.topological_sort(dag):
        column[comp] = max((column[p] + 1 for p in dag.predecessors(comp)), default=0)
    by_column: dict[int, list[str]] = defaultdict(list)
    for node in digraph.nodes:
        by_column[column[member_of[node]]].append(node)
    lane: dict[str, int] = {}
    for x in sorted(by_column):
        order = {n: i for i, n in enumerate(by_column[x])}
        wanted = {}
        for node in by_column[x]:
            parents = [lane[p] for p in digraph.predecessors(node) if p in lane]
            wanted[node] = sum(parents) / len(parents) if parents else None
        taken: set[int] = set()
        placed = sorted(by_column[x], key=lambda n: (wanted[n] is None, wanted[n] or 0, order[n]))
        for node in placed:
            want = wanted[node]
            y = round(want) if want is not None else 0
            while y in taken:
                y += 1
            taken.add(y)
            lane[node] = y
    return {n: (float(column[member_of[n]]), -float(lane[n])) for n in digraph.nodes}


def _palette(shown: ShownGraph) -> dict[str, str]:
    counts = Counter(n.colour_key for n in shown.nodes.values() if n.known)
    cmap = matplotlib.colormaps["tab20"]
    keys = [k for k, _ in sorted(counts.items(), key=lambda kc: (-kc[1], kc[0]))]
    # tab20 pairs a strong and a pale shade of each hue: all strong hues first.
    shades = [*range(0, 20, 2), *range(1, 20, 2)]
    colours = {k: matplotlib.colors.to_hex(cmap(shades[i % 20])) for i, k in enumerate(keys)}
    for key in keys[MAX_LEGEND_KEYS:]:
        colours[key] = OTHER_COLOUR
    return colours


def _title(graph: FlowGraph) -> str:
    f = flow_figures(graph)
    flags = []
    if f.uncoordinated:
        flags.append(f"{f.uncoordinated_branches} uncoordinated")
    if f.dangling_edges:
        flags.append(
            f"{f.dangling_edges} edge{'s' if f.dangling_edges > 1 else ''} to unknown nodes"
        )
    if f.has_cycle:
        flags.append(f"{f.cycles} cycle{'s' if f.cycles > 1 else ''}")
    head = (
        f"{graph.correlation_id}: {f.nodes:,} nodes, {f.edges:,} edges, depth {f.depth}, "
        f"fan-out {f.max_fan_out}, {f.parallel_branches} parallel branches"
    )
    return head + (f" ({', '.join(flags)})" if flags else "")


def _legend(colours: dict[str, str], shown: ShownGraph) -> list[Line2D]:
    def dot(colour: str, label: str, ring: str = "#404040", width: float = 0.8) -> Line2D:
        return Line2D(
            [], [], marker="o", ls="", markersize=9, markerfacecolor=colour,
            markeredgecolor=ring, markeredgewidth=width, label=label,
        )  # fmt: skip

    keys = list(colours)
    handles = [dot(colours[k], k) for k in keys[:MAX_LEGEND_KEYS]]
    if len(keys) > MAX_LEGEND_KEYS:
        handles.append(dot(OTHER_COLOUR, f"{len(keys) - MAX_LEGEND_KEYS} more"))
    nodes = shown.nodes.values()
    if any(not n.known for n in nodes):
        handles.append(dot(UNKNOWN_COLOUR, "unknown node (edge only)"))
    if any(n.uncoordinated for n in nodes):
        handles.append(dot("white", "uncoordinated branch", UNCOORDINATED_RING, 2.5))
    if shown.cycle_edges:
        handles.append(Line2D([], [], color=CYCLE_EDGE, label="edge in a cycle"))
    return handles


def _draw_edges(ax: Axes, shown: ShownGraph, pos: dict[str, tuple[float, float]]) -> None:
    for u, v in shown.digraph.edges:
        known = shown.nodes[u].known and shown.nodes[v].known
        backwards = pos[v][0] <= pos[u][0]
        ax.annotate(
            "",
            xy=pos[v],
            xytext=pos[u],
            arrowprops={
                "arrowstyle": "-|>",
                "color": CYCLE_EDGE if (u, v) in shown.cycle_edges else "#606060",
                "lw": 0.8,
                "linestyle": "-" if known else "--",
                "shrinkA": 7,
                "shrinkB": 7,
                "connectionstyle": "arc3,rad=0.35" if backwards else "arc3,rad=0.0",
            },
            zorder=1,
        )


def figure(graph: FlowGraph, max_nodes: int = DEFAULT_MAX_NODES) -> Figure:
    """The matplotlib figure of ``graph`` (at most ``max_nodes`` nodes drawn)."""
    shown = shown_graph(graph, max_nodes)
    pos = layered_positions(shown.digraph)
    columns = 1 + max((x for x, _ in pos.values()), default=0)
    lanes = 1 - min((y for _, y in pos.values()), default=0)
    fig = Figure(
        figsize=(min(max(7.0, 1.2 + 0.9 * columns), 48.0), min(max(4.0, 1.2 + 0.5 * lanes), 36.0))
    )
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    colours = _palette(shown)
    _draw_edges(ax, shown, pos)
    order = list(shown.digraph.nodes)
    nodes = [shown.nodes[n] for n in order]
    ax.scatter(
        [pos[n][0] for n in order],
        [pos[n][1] for n in order],
        s=[140 if n.members > 1 else 90 for n in nodes],
        c=[colours.get(n.colour_key, UNKNOWN_COLOUR) if n.known else UNKNOWN_COLOUR for n in nodes],
        edgecolors=[UNCOORDINATED_RING if n.uncoordinated else "#404040" for n in nodes],
        linewidths=[2.5 if n.uncoordinated else 0.8 for n in nodes],
        zorder=2,
        gid="flow-nodes",
    )
    if len(order) <= 200:
        for node_id, node in zip(order, nodes, strict=True):
            x, y = pos[node_id]
            ax.text(x, y - 0.22, node.text, fontsize=6, ha="center", va="top", zorder=3)
    ax.set_title(_title(graph), fontsize=9, loc="left")
    ax.legend(
        handles=_legend(colours, shown),
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=7,
        frameon=False,
    )
    if shown.note:
        ax.text(0.0, 0.0, shown.note, transform=ax.transAxes, fontsize=7, style="italic", va="top")
    ax.margins(0.06, 0.12)
    return fig


def render(
    graph: FlowGraph, fmt: Format = "svg", *, max_nodes: int = DEFAULT_MAX_NODES, dpi: int = 100
) -> bytes:
    """The picture of ``graph`` as SVG or PNG bytes."""
    if fmt not in FORMATS:
        raise ValueError(f"cannot draw a flow as {fmt!r}: use one of {', '.join(FORMATS)}")
    fig = figure(graph, max_nodes)
    buf = io.BytesIO()
    # Text stays text in SVG (much smaller than glyph paths); fixed ids and no date make the
    # same graph give the same bytes.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "model-foundry"}):
        fig.savefig(
            buf,
            format=fmt,
            dpi=dpi,
            bbox_inches="tight",
            metadata={"Date": None} if fmt == "svg" else None,
        )
    return buf.getvalue()


def write_picture(graph: FlowGraph, path: Path, *, max_nodes: int = DEFAULT_MAX_NODES) -> Path:
    """Draw ``graph`` into ``path``, SVG or PNG by its suffix."""
    suffix = path.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise ValueError(f"{path}: a flow picture is written as .svg or .png, not {suffix!r}")
    fmt: Format = "svg" if suffix == ".svg" else "png"
    path.write_bytes(render(graph, fmt, max_nodes=max_nodes))
    return path


def data_uri(image: bytes, fmt: Format) -> str:
    return f"data:{_MIME[fmt]};base64,{base64.b64encode(image).decode('ascii')}"


@dataclass(frozen=True, slots=True)
class Picture:
    """A flow picture ready for markdown metadata."""

    correlation_id: str
    fmt: Format
    image: bytes
    markdown: str


def picture_for_metadata(
    graph: FlowGraph, *, max_nodes: int = DEFAULT_MAX_NODES, limit: int = MAX_METADATA_BYTES
) -> Picture | None:
    """The picture as a markdown image whose data URI fits ``limit``, or ``None``.

    SVG first (sharp, and small for most sessions), then PNG at falling resolutions, then a
    lower node cap: a picture that cannot fit is left out rather than bloating run storage.
    """
    attempts: list[tuple[Format, int, int]] = [
        ("svg", max_nodes, 100),
        ("png", max_nodes, 90),
        ("png", max_nodes, 60),
        ("png", max(20, max_nodes // 3), 60),
    ]
    for fmt, cap, dpi in attempts:
        image = render(graph, fmt, max_nodes=cap, dpi=dpi)
        markdown = f"![flow of {graph.correlation_id}]({data_uri(image, fmt)})"
        if len(markdown) <= limit:
            return Picture(graph.correlation_id, fmt, image, markdown)
    return None


__all__ = [
    "FORMATS",
    "MAX_METADATA_BYTES",
    "Picture",
    "data_uri",
    "figure",
    "layered_positions",
    "picture_for_metadata",
    "render",
    "write_picture",
]
