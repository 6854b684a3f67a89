"""``simulate-slots``, a dev tool: fake OpenAI-compatible servers for the slot file's slots."""

from __future__ import annotations

import argparse

from model_foundry.cli._common import Subparsers


def cmd_simulate_slots(args: argparse.Namespace) -> int:
    from model_foundry.devtools.simulator.command import main

    return main(args.forwarded)


def register(sub: Subparsers) -> None:
    # The simulator parses its own arguments (devtools/simulator/command.py): registering the
    # verb here must not import a dev tool. Without -h here, --help reaches its parser too.
    p = sub.add_parser(
        "simulate-slots",
        help="dev/test tool: serve the slot file's slots as fake OpenAI-compatible servers",
        add_help=False,
    )
    p.set_defaults(func=cmd_simulate_slots, forwards_arguments=True)
