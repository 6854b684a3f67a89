"""Getting events in: ``publish``, ``drain``, ``rebuild``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from model_foundry.cli._common import Subparsers, nats_client
from model_foundry.lib import settings
from model_foundry.lib.errors import UserError

if TYPE_CHECKING:
    from model_foundry.lib.publish import OutgoingEvent


def cmd_publish(args: argparse.Namespace) -> int:
    from model_foundry.devtools.sample_events import sample_events
    from model_foundry.lib.publish import publish_with

    skipped = ""
    events: Iterable[OutgoingEvent]
    if args.file:
        events, skipped = _checked_file(args)
    else:
        events = sample_events(args.sample, sessions=args.sessions, seed=args.seed)
    res = nats_client()
    count = publish_with(res, events)
    print(f"published {count} events to {res.redacted_servers}{skipped}")
    return 0


def _checked_file(args: argparse.Namespace) -> tuple[list[OutgoingEvent], str]:
    """The file's events, read and checked whole before anything is published; each bad line
    is one sentence on stderr, and any bad line stops all of it unless ``--skip-bad``."""
    from model_foundry.lib.events import ALL_SUBJECTS
    from model_foundry.lib.publish import bad_lines_shown, read_jsonl, unknown_subject

    if args.subject is not None and args.subject not in ALL_SUBJECTS:
        raise UserError(f"--subject: {unknown_subject(args.subject)}")
    read = read_jsonl(Path(args.file), default_subject=args.subject)
    if not read.bad:
        return read.events, ""
    for line in bad_lines_shown(read.bad):
        print(line, file=sys.stderr)
    if not args.skip_bad:
        raise UserError(
            f"{args.file}: {len(read.bad)} of {read.lines} lines are bad, so nothing was "
            f"published; --skip-bad publishes the other {len(read.events)}"
        )
    return read.events, f" ({len(read.bad)} bad lines skipped)"


def cmd_drain(args: argparse.Namespace) -> int:
    from model_foundry.lib.events import SUBJECTS
    from model_foundry.lib.inbox.drain import drain_subject
    from model_foundry.lib.telemetry import for_run

    res = nats_client()
    subjects = [args.subject] if args.subject else list(SUBJECTS)
    for subject in subjects:
        with for_run(None, "pipeline_event_inbox_record") as telemetry:
            record = asyncio.run(
                drain_subject(
                    res,
                    settings.duckdb_path(),
                    subject,
                    batch_size=args.batch_size,
                    telemetry=telemetry,
                )
            )
        print(
            f"{subject}: received {record.received}, inserted {record.inserted}, "
            f"duplicates {record.duplicates}, dead-lettered {record.dead_lettered}"
        )
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    from model_foundry.lib.inbox.typed import refresh_inbox_tables

    result = refresh_inbox_tables(settings.duckdb_path(), rebuild=True)
    print(f"{args.step}: rebuilt from the whole inbox (commits up to {result.upto})")
    for name, rows in result.totals.items():
        print(f"  {name}: {rows} rows")
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("publish", help="publish events from a JSONL file or generated samples")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--file", help="JSONL file, one event body per line")
    src.add_argument("--sample", type=int, metavar="N", help="publish N generated events")
    p.add_argument("--subject", help="subject for lines that carry none")
    p.add_argument(
        "--skip-bad",
        action="store_true",
        help="with --file: publish the good lines and list the bad (default: publish nothing)",
    )
    p.add_argument("--sessions", type=int, default=5, help="sessions to spread samples over")
    p.add_argument("--seed", type=int, default=7)
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser(
        "drain", help="drain subjects into DuckDB now, outside Dagster (what the asset runs)"
    )
    p.add_argument("--subject", help="one subject (default: all four)")
    p.add_argument("--batch-size", type=int, default=1000)
    p.set_defaults(func=cmd_drain)

    p = sub.add_parser(
        "rebuild", help="empty a downstream step's tables and read the whole inbox again"
    )
    p.add_argument(
        "--step",
        choices=["inbox_tables"],
        default="inbox_tables",
        help="the step (the typed tables: chat_messages ... semantic_searches)",
    )
    p.set_defaults(func=cmd_rebuild)
