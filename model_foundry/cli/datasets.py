"""``dataset collect | sessions``: dataset collection outside the daemon, through the same
entry points as the assets (the collection's materialization, the session export in lib)."""

from __future__ import annotations

import argparse
from typing import Any

from model_foundry.cli._common import Subparsers, command_log, plain_metadata
from model_foundry.lib import settings
from model_foundry.lib.errors import UserError


def cmd_dataset_collect(args: argparse.Namespace) -> int:
    import json
    import uuid

    from model_foundry.lib.datasets import collection_line
    from model_foundry.lib.exports.names import check_name
    from model_foundry.lib.llm import cause_lines
    from model_foundry.lib.recipes.collection import Collection, collect_samples
    from model_foundry.lib.recipes.roles import require_judge_slot
    from model_foundry.lib.slots.source import slot_source_from_env

    check_name(args.name, "name")
    if args.version is not None:
        check_name(args.version, "version")

    # A bad slot file is refused in its one sentence before anything runs.
    slots = slot_source_from_env()
    slot_file = slots.load()
    if args.judge:
        # Refused before anything runs, in the asset's words.
        require_judge_slot(slot_file, None)
    config: dict[str, Any] = {
        "name": args.name,
        "samples_per_prompt": args.samples,
        "include_chat_sessions": not args.no_chat_sessions,
        "export": not args.no_export,
        "judge": args.judge,
    }
    for key, value in (
        ("version", args.version),
        ("prompt_dir", args.prompt_dir),
        ("roles", args.roles),
        ("license", args.license),
    ):
        if value is not None:
            config[key] = value
    # The asset's own steps, without Dagster: the first request leaves before any of it
    # loads (`bench client`'s start-up), and an in-process run kept nothing in Dagster anyway.
    run_id = str(uuid.uuid4())
    meta = collect_samples(
        Collection.of(config), settings.duckdb_path(), slots, run_id=run_id,
        log=command_log("model_foundry.dataset"), provenance=f"model-foundry run {run_id}",
    )  # fmt: skip
    # Counts and one sentence per failure cause for people; the JSON line last, for scripts.
    print(collection_line(meta))
    if meta.get("split_warning"):
        print(f"warning: {meta['split_warning']}")
    for line in cause_lines(meta.get("failure_causes") or {}, indent="  "):
        print(line)
    if args.judge:
        from model_foundry.materialize import judge_collected

        result = judge_collected(config, meta)
        judged = result.asset_materializations_for_node("dataset_judgements")
        if not judged:
            raise UserError("judging the answers failed; the run log above says why")
        meta["judgements"] = _print_judgements(judged[0].metadata)
    print(json.dumps(meta, default=str))
    return 0


def _print_judgements(metadata: Any) -> dict[str, Any]:
    """The judge's pairs, agreement rate and win-rate table, printed; its plain metadata."""
    from model_foundry.lib.datasets.preference_card import win_rate_table
    from model_foundry.lib.llm import cause_lines

    meta = {k: v for k, v in plain_metadata(metadata).items() if k != "win_rate_table"}
    rate = meta.get("agreement_rate")
    shown = "n/a" if rate is None else f"{rate:.1%}"
    print(
        f"judge {', '.join(meta.get('judge_models') or []) or 'none'}: "
        f"{meta.get('preference_pairs', 0)} preference pairs, agreement rate {shown}, "
        f"{meta.get('ties', 0)} ties, {meta.get('judgements_unparsed', 0)} answers unparsed, "
        f"{meta.get('self_judgements_skipped', 0)} self-judgements skipped"
    )
    for line in cause_lines(meta.get("failure_causes") or {}, indent="  "):
        print(line)
    for cause, n in (meta.get("unparsed_causes") or {}).items():
        print(f"  {n} judge answers unparsed: {cause}")
    print(win_rate_table(meta.get("win_rates") or []))
    return meta


def _time(value: str | None, flag: str) -> str | None:
    from datetime import datetime

    if value is None:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise UserError(f"{flag} {value!r} is not a date or time like 2026-12-01T09:00") from None
    return value


def cmd_dataset_sessions(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from model_foundry.lib.exports.hygiene import export_hygiene
    from model_foundry.lib.exports.published import empty_split_warning, figures_line
    from model_foundry.lib.trajectories.export import (
        export_session_dataset,
        session_export_request,
    )

    try:
        request = session_export_request(
            args.name,
            version=args.version,
            since=_time(args.since, "--since"),
            until=_time(args.until, "--until"),
            license=args.license,
            include_active=args.include_active,
            filters=args.filters,
            test_share=args.test_share,
        )
        outcome = export_session_dataset(settings.duckdb_path(), request, export_hygiene)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    print(outcome.path)
    print(figures_line(outcome))
    warning = empty_split_warning(outcome, args.test_share)
    if warning:
        print(f"warning: {warning}")
    print(json.dumps(asdict(outcome.figures), default=str))
    return 0


def register(sub: Subparsers) -> None:
    dataset = sub.add_parser("dataset", help="dataset collection outside the daemon")
    dataset_sub = dataset.add_subparsers(dest="dataset_command", required=True)
    p = dataset_sub.add_parser(
        "collect", help="prompt sources -> slots -> dataset_samples -> export"
    )
    p.add_argument("--name", default="foundry", help="dataset name (the export folder)")
    p.add_argument("--version", default=None, help="export version (default: UTC date, suffixed)")
    p.add_argument("--prompt-dir", default=None, help="prompt files (default data/prompts)")
    p.add_argument("--samples", type=int, default=1, help="samples per prompt and role")
    p.add_argument("--roles", nargs="+", default=None, help="roles (default: the profile's)")
    p.add_argument("--no-chat-sessions", action="store_true", help="skip inbox chat prompts")
    p.add_argument("--no-export", action="store_true", help="collect without exporting")
    p.add_argument("--license", default=None, help="the card's license (default: unknown)")
    p.add_argument(
        "--judge",
        action="store_true",
        help="have the judge slot compare the answers and export preference pairs",
    )
    p.set_defaults(func=cmd_dataset_collect)
    p = dataset_sub.add_parser("sessions", help="finished session trajectories -> a clean export")
    p.add_argument("--name", required=True, help="dataset name (the export folder)")
    p.add_argument("--version", default=None, help="version (default: UTC date, suffixed)")
    p.add_argument("--since", default=None, help="sessions active at or after this time")
    p.add_argument("--until", default=None, help="sessions begun before this time")
    p.add_argument("--license", default=None, help="the card's license (default: unknown)")
    p.add_argument("--include-active", action="store_true", help="also export running sessions")
    # Unset: the export's own default filters (lib), read only when the verb runs.
    p.add_argument("--filters", nargs="*", default=None, help="quality filters")
    p.add_argument(
        "--test-share", type=float, default=0.05, help="share of new groups sent to test"
    )
    p.set_defaults(func=cmd_dataset_sessions)
