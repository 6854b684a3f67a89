"""``model-foundry``: the command line beside the Dagster UI.

Each module of this package registers its verbs beside their handlers; this one puts them in
the order ``--help`` lists them and runs the one asked for. Expected failures (NATS not
reachable, DuckDB busy, a bad slot file) print one sentence and exit 1; only bugs print a
traceback. A dev tool's verb imports its module only when it runs.
"""

from __future__ import annotations

import argparse
import gc
import sys

from model_foundry.cli import (
    bench,
    datasets,
    devstack,
    events,
    flow,
    nats,
    reading,
    recipes,
    simulator,
    slots,
)
from model_foundry.lib.errors import UserError


def _expected_errors() -> tuple[type[BaseException], ...]:
    from model_foundry.lib.exports.names import UnsafeNameError
    from model_foundry.lib.nats.connection import NatsUnavailableError
    from model_foundry.lib.query import QueryError
    from model_foundry.lib.slots.config import NoSlotForRoleError, SlotFileError
    from model_foundry.lib.storage import DuckDBBusyError

    return (
        # Dev tools' errors derive from it too (a local nats-server that will not start), so
        # catching them needs no dev tool imported.
        UserError,
        NatsUnavailableError,
        DuckDBBusyError,
        FileNotFoundError,
        QueryError,
        UnsafeNameError,
        SlotFileError,
        NoSlotForRoleError,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="model-foundry",
        description="NATS events into DuckDB, prompts to GPU model slots, datasets out.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    groups = (nats, events, reading, slots, flow, devstack, bench, datasets, recipes, simulator)
    for group in groups:
        group.register(sub)
    return parser


# Start-up (Dagster, the defs, the storage layer) builds a heap of a few hundred thousand
# long-lived objects, and the collector's default first threshold (700 allocations) walks
# that growing heap again and again while it is built: about a sixth of a command's CPU
# before its first request (`bench client`'s start-up). A command is one short process whose
# garbage is almost all freed by reference counting, so it collects far less often.
_COMMAND_GC_THRESHOLDS = (50_000, 50, 100)


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        # Only as the command itself: a caller (a test) passing ``argv`` keeps its own.
        gc.set_threshold(*_COMMAND_GC_THRESHOLDS)
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and not getattr(args, "forwards_arguments", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.forwarded = rest
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except _expected_errors() as exc:
        print(f"model-foundry: {exc}", file=sys.stderr)
        return 1


__all__ = ["build_parser", "main"]
