"""``flow``: a session's flow graph drawn as an SVG or PNG picture."""

from __future__ import annotations

import argparse
from pathlib import Path

from model_foundry.cli._common import Subparsers
from model_foundry.lib import settings
from model_foundry.lib.errors import UserError


def cmd_flow(args: argparse.Namespace) -> int:
    from model_foundry.lib.flow.graph import flow_figures
    from model_foundry.lib.flow.render import write_picture
    from model_foundry.lib.flow.store import load_session_graph

    db = settings.duckdb_path()
    if not db.exists():
        raise FileNotFoundError(
            f"no DuckDB file at {db}; run `make demo` or `make up` first, "
            "or point MODEL_FOUNDRY_DUCKDB at one"
        )
    out = Path(args.out)
    if out.suffix.lower() not in (".svg", ".png"):
        raise UserError(f"{out}: a flow picture is written as .svg or .png")
    graph = load_session_graph(db, args.session)
    if graph is None:
        raise UserError(
            f"session {args.session!r} has no lineage events in {db}; "
            'list sessions with: model-foundry query "SELECT correlation_id FROM session_flow"'
        )
    write_picture(graph, out, max_nodes=args.max_nodes)
    f = flow_figures(graph)
    flags = [
        name
        for name, on in (
            ("uncoordinated", f.uncoordinated),
            (f"{f.dangling_edges} edge(s) to unknown nodes", f.dangling_edges),
            (f"{f.cycles} cycle(s)", f.cycles),
        )
        if on
    ]
    print(
        f"{args.session}: {f.node_events} node and {f.edge_events} edge events, {f.nodes} nodes, "
        f"depth {f.depth}, fan-out {f.max_fan_out}, {f.parallel_branches} parallel branches"
        + (f" ({', '.join(flags)})" if flags else "")
    )
    print(f"wrote {out}")
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("flow", help="draw a session's flow graph as an SVG or PNG picture")
    p.add_argument("session", help="the session's correlation_id")
    p.add_argument("--out", required=True, help="the picture to write, FILE.svg or FILE.png")
    p.add_argument("--max-nodes", type=int, default=300, help="nodes drawn at most")
    p.set_defaults(func=cmd_flow)
