"""``slots check``: every live slot of the profile, asked what the pipeline asks before work."""

from __future__ import annotations

import argparse

from model_foundry.cli._common import Subparsers
from model_foundry.lib import settings


def cmd_slots_check(args: argparse.Namespace) -> int:
    from model_foundry.lib.slots.config import load_slot_file
    from model_foundry.lib.slots.context import ContextBook
    from model_foundry.lib.text_table import text_table

    slot_file = load_slot_file(settings.slot_file_path())
    profile = args.profile or settings.profile()
    live = slot_file.live_slots(profile)
    rows = []
    failed = 0
    with ContextBook(live) as book:
        for slot in live:
            context = book.context(slot.name)
            template = book.template(slot.name)
            reached = context.tokens is not None or template.ok is not None
            if template.refused:
                verdict = f"REFUSED: {template.detail}"
            elif template.ok:
                verdict = f"keeps the messages ({template.detail})"
            else:
                verdict = template.detail
            window = (
                f"{context.tokens} ({context.source})"
                if context.tokens is not None
                else f"unknown ({context.note or 'no endpoint answered'})"
            )
            failed += template.refused or not reached
            rows.append((slot.name, slot.runtime, slot.base_url, window, verdict))
    print(f"profile {profile}, slot file {settings.slot_file_path()}")
    print(text_table(("slot", "runtime", "url", "tokens per request", "chat template"), rows))
    if failed:
        print(f"{failed} of {len(live)} slots failed the check")
    return 1 if failed else 0


def register(sub: Subparsers) -> None:
    slots = sub.add_parser("slots", help="the slot file's servers")
    slots_sub = slots.add_subparsers(dest="slots_command", required=True)
    p = slots_sub.add_parser(
        "check",
        help="ask every live slot its context window and check that its chat template keeps "
        "the messages; exit 1 when a slot is unreachable or refused",
    )
    p.add_argument("--profile", default=None, help="the slot file profile (default: active)")
    p.set_defaults(func=cmd_slots_check)


__all__ = ["register"]
