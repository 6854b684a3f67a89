"""The local stack, a dev tool: ``up`` and ``demo``. Each imports its dev tool when it runs."""

from __future__ import annotations

import argparse

from model_foundry.cli._common import Subparsers


def cmd_up(args: argparse.Namespace) -> int:
    from model_foundry.devtools.devstack import up

    return up(port=args.port)


def cmd_demo(args: argparse.Namespace) -> int:
    from model_foundry.devtools.devstack import demo

    return demo(events=args.events)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("up", help="local NATS + slot simulator + Dagster UI and daemon")
    p.add_argument("--port", type=int, default=3000, help="Dagster UI port")
    p.set_defaults(func=cmd_up)

    p = sub.add_parser("demo", help="one-shot: sample events through the whole pipeline")
    # 400: enough lineage per session for each sample session's workers to show their branches.
    p.add_argument("--events", type=int, default=400)
    p.set_defaults(func=cmd_demo)
