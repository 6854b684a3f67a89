"""The local stack, a dev tool: ``up`` and ``demo``. Each imports its dev tool when it runs."""

from __future__ import annotations

import argparse

from model_foundry.cli._common import Subparsers


def cmd_up(args: argparse.Namespace) -> int:
    from model_foundry.devtools.devstack import up

    return up(port=args.port)


def cmd_demo(args: argparse.Namespace) -> int:
    from model_foundry.devtools.devstack import demo

    return demo(events=args.events, real=args.real)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("up", help="local NATS + slot simulator + Dagster UI and daemon")
    p.add_argument("--port", type=int, default=3000, help="Dagster UI port")
    p.set_defaults(func=cmd_up)

    p = sub.add_parser("demo", help="one-shot: sample events through the whole pipeline")
    # 400: enough lineage per session for each sample session's workers to show their branches.
    p.add_argument("--events", type=int, default=400)
    p.add_argument(
        "--real",
        action="store_true",
        help="every slot a llama-server on a real model (Gemma 3 270M, CPU; builds or reuses "
        "llama-server and the model in the cache) instead of the simulator",
    )
    p.set_defaults(func=cmd_demo)
