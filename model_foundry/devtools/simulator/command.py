"""``model-foundry simulate-slots``: its arguments, parsed here so the product CLI never
imports the simulator until the verb runs (``python -m model_foundry.devtools.simulator`` is
the same command)."""

from __future__ import annotations

import argparse
from pathlib import Path

from model_foundry.devtools.simulator.server import run

DESCRIPTION = (
    "DEV AND TEST TOOL, not a model: serve each slot of a slot file as an "
    "OpenAI-compatible server on its base_url's port, with realistic queueing, "
    "latency and injectable faults. Stop with Ctrl-C."
)


def build_parser(prog: str = "model-foundry simulate-slots") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    p.add_argument(
        "--slots",
        type=Path,
        default=None,
        help="slot file (default: MODEL_FOUNDRY_SLOTS or the shipped one)",
    )
    p.add_argument(
        "--profile",
        default=None,
        help="serve the live slots of this profile (default: MODEL_FOUNDRY_PROFILE)",
    )
    p.add_argument(
        "--all",
        dest="serve_all",
        action="store_true",
        help="serve every slot, not only the live ones",
    )
    p.add_argument("--only", nargs="+", default=None, metavar="SLOT", help="serve only these slots")
    p.add_argument("--host", default=None, help="listen on this host instead of the base_url's")
    p.add_argument(
        "--free-ports", action="store_true", help="bind free ports instead of the base_url ports"
    )
    p.add_argument(
        "--write-slot-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="write a copy of the slot file pointing at the ports really bound",
    )
    p.add_argument(
        "--speed", type=float, default=1.0, help="latency divisor: 10 answers 10x faster"
    )
    p.add_argument(
        "--start-delay", type=float, default=0.0, help="seconds /health says 503 loading"
    )
    p.add_argument(
        "--error-rate",
        type=float,
        default=0.0,
        help="share of requests answered with --error-status",
    )
    p.add_argument("--error-status", type=int, default=500)
    p.add_argument(
        "--burst-503", type=int, default=0, help="answer the next N requests per slot with 503"
    )
    p.add_argument(
        "--burst-429", type=int, default=0, help="answer the next N requests per slot with 429"
    )
    p.add_argument("--slowdown", type=float, default=1.0, help="multiply latency by this")
    p.add_argument(
        "--drop-rate", type=float, default=0.0, help="share of requests whose connection is cut"
    )
    p.add_argument(
        "--max-chunks", type=int, default=8, help="stream at most this many content chunks"
    )
    p.add_argument("--seed", type=int, default=0)
    return p


def main(argv: list[str]) -> int:
    return run(build_parser().parse_args(argv))


__all__ = ["build_parser", "main"]
