"""``recipe check | preview | run | export``: a dataset recipe from the command line.

``run`` generates the rows as the recipe's asset does (the same steps, the same slots and
DuckDB file the environment names), without loading Dagster; ``preview`` generates a few rows
under the ``preview`` version and prints them; ``check`` reads the recipe and the slot file
and lists every problem, a line each; ``export`` writes the stored rows through the datasets'
export (as the asset ``recipe_<name>_export`` does), asking no slot.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from model_foundry.cli._common import Subparsers, command_log
from model_foundry.lib import settings


def _recipe(args: argparse.Namespace) -> Any:
    from model_foundry.lib.recipes.files import find_recipe
    from model_foundry.lib.recipes.parse import parse_recipe

    found = find_recipe(args.name, Path(args.file) if args.file else None)
    return found, parse_recipe(found.attributes, str(found.path), default_name=found.name)


def _slot_file() -> Any:
    from model_foundry.lib.slots.config import load_slot_file

    # A bad slot file is refused in its own sentence before anything runs.
    return load_slot_file(settings.slot_file_path())


def cmd_recipe_check(args: argparse.Namespace) -> int:
    import sys

    from model_foundry.lib.recipes.files import find_recipe
    from model_foundry.lib.recipes.graph import levels
    from model_foundry.lib.recipes.parse import read_recipe
    from model_foundry.lib.recipes.roles import role_problems

    found = find_recipe(args.name, Path(args.file) if args.file else None)
    recipe, problems = read_recipe(found.attributes, str(found.path), default_name=found.name)
    if recipe is not None:
        # What the file says is checked first: the schedule, then the roles against the slots.
        from model_foundry.defs.recipes.component import cron_problem

        cron = cron_problem(recipe)
        problems = [*([cron] if cron is not None else []),
                    *role_problems(recipe, _slot_file(), None)]  # fmt: skip
    if problems or recipe is None:
        for problem in problems:
            print(f"model-foundry: {problem}", file=sys.stderr)
        return 1
    waves = " | ".join(", ".join(c.name for c in wave) for wave in levels(recipe))
    print(f"{found.path}: recipe {recipe.name} is ok: {len(recipe.columns)} columns ({waves})")
    return 0


def cmd_recipe_preview(args: argparse.Namespace) -> int:
    from model_foundry.lib.recipes.generate import PREVIEW_VERSION, run_recipe
    from model_foundry.lib.recipes.preview import expanded, preview_rows
    from model_foundry.lib.slots.source import slot_source_from_env

    found, recipe = _recipe(args)
    _slot_file()
    db = settings.duckdb_path()
    outcome = run_recipe(
        recipe, db, slot_source_from_env(), version=PREVIEW_VERSION, run_id=None,
        log=command_log("model_foundry.recipe"), base_dir=found.folder, limit=args.rows,
    )  # fmt: skip
    print(expanded(preview_rows(db, str(outcome.view), PREVIEW_VERSION, args.rows)))
    print(_line(outcome.metadata()))
    return 0


def _line(meta: dict[str, Any]) -> str:
    rejected = sum((meta.get("rejected_by_cause") or {}).values())
    return (
        f"recipe {meta['recipe']} ({meta['version']}): {meta['rows']} rows, "
        f"{meta['rows_complete']} complete, {rejected} cells held back; "
        f"{meta['cells_written']} cells written, {meta['cells_reused']} reused, "
        f"{meta['llm_cells_asked']} asked ({meta.get('sent', 0)} sent to the slots), "
        f"{meta['llm_cells_unanswered']} unanswered; rows in the view {meta['view']}"
    )


def cmd_recipe_run(args: argparse.Namespace) -> int:
    import json
    import uuid

    from model_foundry.lib.llm import cause_lines
    from model_foundry.lib.recipes.generate import run_recipe
    from model_foundry.lib.slots.source import slot_source_from_env

    found, recipe = _recipe(args)
    _slot_file()
    # The asset's own steps, without Dagster: the first request leaves before any of it
    # loads, and an in-process run kept nothing in Dagster anyway.
    log = command_log("model_foundry.recipe")
    outcome = run_recipe(
        recipe, settings.duckdb_path(), slot_source_from_env(), run_id=str(uuid.uuid4()),
        log=log, base_dir=found.folder,
    )  # fmt: skip
    unanswered = outcome.unanswered_warning()
    if unanswered:
        log.warning(unanswered)
    meta = {**outcome.metadata(), "dagster/row_count": outcome.rows}
    print(_line(meta))
    for line in cause_lines(meta.get("failure_causes") or {}, indent="  "):
        print(line)
    print(json.dumps(meta, default=str))
    return 0


def cmd_recipe_export(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from model_foundry.lib.errors import UserError
    from model_foundry.lib.exports.hygiene import export_hygiene
    from model_foundry.lib.exports.published import empty_split_warning, figures_line
    from model_foundry.lib.recipes.export import (
        export_recipe,
        nothing_kept_warning,
        recipe_export_request,
    )

    _, recipe = _recipe(args)
    db = settings.duckdb_path()
    try:
        request = recipe_export_request(
            version=args.version, license=args.license, test_share=args.test_share,
            output_dir=args.out,
        )  # fmt: skip
        hygiene = export_hygiene(db, recipe.name, args.test_share)
        outcome = export_recipe(db, recipe, request, hygiene)
    except ValueError as exc:  # an unsafe or finished version, a bad hygiene file
        raise UserError(str(exc)) from None
    print(outcome.path)
    print(figures_line(outcome))
    for warning in (nothing_kept_warning(outcome),
                    empty_split_warning(outcome, args.test_share)):  # fmt: skip
        if warning:
            print(f"warning: {warning}")
    print(json.dumps(asdict(outcome.figures), default=str))
    return 0


def register(sub: Subparsers) -> None:
    recipe = sub.add_parser("recipe", help="dataset recipes: check, preview, run, export")
    recipe_sub = recipe.add_subparsers(dest="recipe_command", required=True)
    helps = {
        "check": "read the recipe and the slot file; list every problem, a line each",
        "preview": "generate a few rows under the preview version and print them",
        "run": "generate the recipe's rows, as its Dagster asset does",
        "export": "export the generated rows with hygiene: hf/, openai/, card, manifest",
    }
    for verb, func in (("check", cmd_recipe_check), ("preview", cmd_recipe_preview),
                       ("run", cmd_recipe_run), ("export", cmd_recipe_export)):  # fmt: skip
        p = recipe_sub.add_parser(verb, help=helps[verb])
        p.add_argument("name", help="the recipe's name (attributes.name in its defs.yaml)")
        p.add_argument("--file", default=None, help="the recipe's defs.yaml (default: search "
                       "model_foundry/defs/ and examples/recipes/)")  # fmt: skip
        if verb == "preview":
            p.add_argument("--rows", type=int, default=5, help="rows to generate and show")
        if verb == "export":
            p.add_argument("--out", default=None, help="export root (default: <data dir>/"
                           "datasets); the folder is <out>/<name>/<version>/")  # fmt: skip
            p.add_argument("--version", default=None, help="version (default: UTC date, "
                           "suffixed)")  # fmt: skip
            p.add_argument("--license", default=None, help="the card's license (default: "
                           "unknown)")  # fmt: skip
            p.add_argument("--test-share", type=float, default=0.05,
                           help="share of new seed rows sent to test")  # fmt: skip
        p.set_defaults(func=func)
