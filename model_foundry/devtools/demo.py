"""The story ``make demo`` tells: sample events in, the real assets run, a report out."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings, storage
from model_foundry.lib.datasets import collection_line
from model_foundry.lib.events import SUBJECTS
from model_foundry.lib.gates.answers import body_text, gate
from model_foundry.lib.hygiene.shown import shown_text
from model_foundry.lib.llm import cause_lines
from model_foundry.lib.nats.connection import nats_client_from_env
from model_foundry.lib.publish import publish_events
from model_foundry.lib.query import run_query
from model_foundry.lib.text_table import text_table
from model_foundry.materialize import materialize

# The demo prints its own summary lines; the runs' step-by-step DEBUG log would bury them.
QUIET: dict = {"log_level": "WARNING"}
# The sample sessions it publishes (every other one holds planted fake secrets).
SESSIONS = 4
SEED = 11


def _publish(count: int) -> int:
    async def run() -> int:
        res = nats_client_from_env()
        async with res.jetstream() as (nc, js):
            published = await publish_events(nc, sample_events(count, sessions=SESSIONS, seed=SEED))
            # One event that breaks the contract, to show where such events go.
            await js.publish("llm.tool_call", b'{"event_id": "demo-bad"}')
            return published + 1

    return asyncio.run(run())


def _metadata(result: dg.ExecuteInProcessResult, node: str) -> dict[str, Any] | None:
    """The node's materialization metadata, or None when its step failed (said on stdout)."""
    materializations = result.asset_materializations_for_node(node)
    if not materializations:
        failure = result.failure_data_for_node(node)
        why = failure.error.message if failure and failure.error else "see the run log"
        print(f"  {node}: failed: {(why.strip().splitlines() or ['see the run log'])[0]}")
        return None
    return {k: getattr(v, "value", v) for k, v in materializations[-1].metadata.items()}


def _counts(counts: Mapping[str, Any] | None) -> str:
    """``{"train": 10, "test": 0}`` as people read it: ``train 10, test 0``."""
    return ", ".join(f"{k} {v:,}" for k, v in (counts or {}).items()) or "none"


def _print_causes(metadata: dict[str, Any]) -> None:
    for line in cause_lines(metadata.get("failure_causes") or {}):
        print(line)


def _print_sessions(result: dg.ExecuteInProcessResult, db: Path) -> None:
    """What the sessions did: their flow, one picture of it, which slot got their turns."""
    from model_foundry.lib.flow.render import write_picture
    from model_foundry.lib.flow.store import load_session_graph

    flow = _metadata(result, "session_flow")
    if flow is not None:
        print(
            f"  session_flow: {flow['dagster/row_count']} sessions, "
            f"{flow['uncoordinated_sessions']} with uncoordinated parallel work"
        )
        found = _rows(
            db,
            "SELECT correlation_id FROM session_flow "
            "ORDER BY uncoordinated DESC, node_events + edge_events DESC, correlation_id LIMIT 1",
        )
        graph = load_session_graph(db, found[0][0]) if found else None
        if graph is not None:
            path = write_picture(graph, db.parent / f"flow-{graph.correlation_id}.svg")
            print(f"  flow of {graph.correlation_id} drawn to {path}")
    routing = _metadata(result, "session_routing")
    if routing is not None:
        turns = routing["turns_by_slot"]
        total = sum(turns.values()) or 1
        shares = ", ".join(f"{slot} {100 * n / total:.0f}%" for slot, n in turns.items())
        print(
            f"  session_routing: the orchestrator sent the sessions' {total} agent turns to "
            f"{shares or '-'}"
        )
    for check in result.get_asset_check_evaluations():
        verdict = "passed" if check.passed else f"WARNING: {check.description}"
        print(f"  check {check.check_name}: {verdict}")


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with storage.connect(db, read_only=True) as con:
        return con.execute(sql).fetchall()


def _prompt_dir() -> Path:
    """The data dir's prompt files, or the shipped example when it has none (a fresh run)."""
    own = settings.data_dir() / "prompts"
    if any(own.glob("*.jsonl")) or any(own.glob("*.parquet")):
        return own
    return settings.DEFAULT_DATA_DIR / "prompts"


def _drain(instance: dg.DagsterInstance) -> None:
    from model_foundry.defs.inbox.assets import pipeline_event_inbox_record

    print("inbox (what the sensors' runs do):")
    rows = []
    for subject in SUBJECTS:
        result = materialize(
            [pipeline_event_inbox_record], partition_key=subject, instance=instance, **QUIET
        )
        record = result.output_for_node("pipeline_event_inbox_record")
        rows.append((subject, record["received"], record["inserted"], record["dead_lettered"]))
    print(text_table(("subject", "received", "inserted", "dead-lettered"), rows, indent="  "))


def _downstream(instance: dg.DagsterInstance) -> None:
    from model_foundry.defs.flow.assets import session_flow, session_routing
    from model_foundry.defs.flow.checks import live_slots_get_turns
    from model_foundry.defs.inbox_tables.assets import inbox_tables
    from model_foundry.defs.summaries.assets import (
        session_summaries,
        session_summary_translations,
    )

    print(
        "downstream (what the automation sensor runs): tables, summaries, translations, "
        "sessions' flow and routing"
    )
    result = materialize(
        [
            inbox_tables,
            session_summaries,
            session_summary_translations,
            session_flow,
            session_routing,
            live_slots_get_turns,
        ],
        instance=instance,
        **QUIET,
    )
    summaries = _metadata(result, "session_summaries")
    if summaries is not None:
        print(
            f"  session_summaries: {summaries['summaries_written']} written by "
            f"{', '.join(summaries['slots_used']) or '-'} "
            f"({summaries['gen_tokens_per_s']} tok/s)"
        )
        _print_causes(summaries)
    translations = _metadata(result, "session_summary_translations")
    if translations is not None:
        # No 'directions' when nothing was pending (e.g. no summary was written).
        directions = translations.get("directions") or {}
        by_direction = ", ".join(f"{k}: {v}" for k, v in directions.items())
        print(
            f"  session_summary_translations: {translations['translations_written']} "
            f"written ({by_direction or 'none pending'})"
        )
        _print_causes(translations)
    _print_sessions(result, settings.duckdb_path())


def _collect(instance: dg.DagsterInstance) -> dict[str, Any] | None:
    from model_foundry.defs.datasets.assets import dataset_samples
    from model_foundry.defs.datasets.judgements import dataset_judgements
    from model_foundry.defs.datasets.session_export import session_dataset
    from model_foundry.defs.resources import slots_resource_from_env
    from model_foundry.defs.throughput.assets import slot_throughput

    # Judged (by grandpa, which the standard profile's fan-out leaves out) wherever the slot
    # file has a judge slot; a slot file without one collects as before.
    slots = slots_resource_from_env(None)
    judge = slots.load().judge_slot(slots.profile) is not None
    print(
        f"dataset collection{', judging' if judge else ''} and session export (what the "
        "nightly schedule runs):"
    )
    collection = {"config": {"name": "demo", "prompt_dir": str(_prompt_dir()), "judge": judge}}
    result = materialize(
        [dataset_samples, dataset_judgements, session_dataset],
        ops={"dataset_samples": collection, "dataset_judgements": collection},
        instance=instance,
        **QUIET,
    )
    dataset = _metadata(result, "dataset_samples")
    if dataset is not None:
        print("  " + collection_line(dataset))
        if dataset.get("split_warning"):
            print(f"  warning: {dataset['split_warning']}")
        _print_causes(dataset)
    judged = _metadata(result, "dataset_judgements") if judge else None
    if judged is not None:
        rate = judged.get("agreement_rate")
        print(
            f"  dataset_judgements: {judged.get('preference_pairs', 0)} preference pairs from "
            f"{judged.get('answer_pairs', 0)} answer pairs, agreement rate "
            f"{'n/a' if rate is None else f'{rate:.0%}'}, {judged.get('ties', 0)} ties"
        )
        if judged.get("split_warning"):
            print(f"  warning: {judged['split_warning']}")
        _print_causes(judged)
        # The export runs after the judgements: its path is in their metadata.
        dataset = {**(dataset or {}), **judged}
    sessions = _metadata(result, "session_dataset")
    if sessions is not None:
        print(
            f"  session_dataset: {_counts(sessions['rows_by_split'])} records from "
            f"{sessions['sessions']} sessions, redactions "
            f"{_counts(sessions['redactions_by_kind'])}, {sessions['duplicates_removed']} "
            f"duplicates removed -> {sessions['export_path']}"
        )
        if sessions.get("split_warning"):
            print(f"  warning: {sessions['split_warning']}")
    materialize([slot_throughput], instance=instance, **QUIET)
    return dataset


# Rows each shipped example recipe generates in the demo: every column type shows, and
# ``demo --real`` on a CPU model stays short.
EXAMPLE_ROWS = 6


def example_line(meta: Mapping[str, Any]) -> str:
    """One recipe's outcome as people read it: its rows, and what was held back by cause
    (``rejected_by_cause``'s ``column: cause`` keys)."""
    held = []
    for key, n in (meta.get("rejected_by_cause") or {}).items():
        column, _, why = str(key).partition(": ")
        held.append(f"{column} {n:,} ({why})" if why else f"{column} {n:,}")
    line = (
        f"  recipe {meta['recipe']}: {meta['rows']:,} rows, {meta['rows_complete']:,} "
        f"complete; held back by cause: {', '.join(held) or 'none'}"
    )
    unanswered = meta.get("llm_cells_unanswered") or 0
    return line + (f"; {unanswered:,} cells unanswered" if unanswered else "")


def run_example_recipes(db: Path, rows: int = EXAMPLE_ROWS) -> list[dict[str, Any]]:
    """The shipped example recipes (``examples/recipes/``) on the demo's data, ``rows`` rows
    each, a line each; their outcomes' metadata.

    They run as ``model-foundry recipe run`` generates, without Dagster: the examples stay out
    of every code location unless MODEL_FOUNDRY_RECIPE_EXAMPLES is true, and their rows'
    text stays in DuckDB. A recipe that cannot run is its one sentence."""
    from model_foundry.defs.resources import slots_resource_from_env
    from model_foundry.lib.errors import UserError
    from model_foundry.lib.recipes.files import recipe_files
    from model_foundry.lib.recipes.generate import run_recipe
    from model_foundry.lib.recipes.parse import parse_recipe

    print(
        "example recipes (examples/recipes/, in Dagster only with "
        f"MODEL_FOUNDRY_RECIPE_EXAMPLES=true), {rows} rows each:"
    )
    log = logging.getLogger("model_foundry.demo.recipes")
    log.setLevel(logging.WARNING)
    slots = slots_resource_from_env(None)
    outcomes = []
    for found in recipe_files((settings.recipe_examples_dir(),)):
        try:
            recipe = parse_recipe(found.attributes, str(found.path), default_name=found.name)
            outcome = run_recipe(recipe, db, slots, run_id=None, log=log,
                                 base_dir=found.folder, limit=rows)  # fmt: skip
        except UserError as exc:
            print(f"  recipe {found.name}: cannot run: {exc}")
            continue
        meta = outcome.metadata()
        print(example_line(meta))
        _print_causes(meta)
        outcomes.append(meta)
    return outcomes


# What the report shows of the demo's file, in order.
REPORT_QUERIES = (
    "SELECT subject, count(*) AS events, count(DISTINCT correlation_id) AS sessions "
    "FROM pipeline_event_inbox GROUP BY subject ORDER BY subject",
    "SELECT subject, reason FROM pipeline_event_dead_letter LIMIT 5",
    "SELECT correlation_id, events, messages, tool_errors, summary_language AS lang, "
    "left(summary, 40) AS summary, left(translation, 40) AS translation "
    "FROM session_overview ORDER BY correlation_id",
    # Rounded: DuckDB shows a double's every digit.
    "SELECT slot, model, attempts, round(error_share, 3) AS error_share, "
    "round(gen_tps, 1) AS gen_tps, round(latency_p50_s, 3) AS latency_p50_s, "
    "round(latency_p95_s, 3) AS latency_p95_s FROM slot_throughput_latest ORDER BY slot",
    "SELECT dataset, version, role, samples, empty, truncated FROM dataset_stats",
    "SELECT language, model, opponent, comparisons, wins, losses, ties, "
    "round(win_rate, 3) AS win_rate FROM model_preferences ORDER BY language, model, opponent",
    "SELECT correlation_id, node_events, edge_events, depth, max_fan_out, "
    "parallel_branches, uncoordinated FROM session_flow ORDER BY correlation_id",
    "SELECT * FROM slot_share_weekly ORDER BY share DESC",
)


def _shown(path: Path, cwd: Path) -> str:
    """``path`` as typed from ``cwd``: relative inside it (``./`` when bare), else absolute."""
    if path.is_relative_to(cwd):
        relative = str(path.relative_to(cwd))
        return relative if os.sep in relative else f".{os.sep}{relative}"
    return str(path)


def cli_command(argv0: str, executable: str, cwd: Path, on_path: str | None) -> str:
    """How to run model-foundry from ``cwd`` so that it works as printed.

    ``make demo`` runs ``.venv/bin/model-foundry``, which is not on the PATH outside an
    activated venv; ``python -m model_foundry.cli`` names no script at all. So: the bare name
    only when the PATH's ``model-foundry`` (``on_path``) is the very script running, else that
    script's path (the venv's, beside ``executable``, for ``-m``), else the ``-m`` form."""
    script = cwd / argv0
    if script.name != "model-foundry" or not script.is_file():
        script = Path(executable).parent / "model-foundry"
    if not script.is_file():
        return f"{shlex.quote(executable)} -m model_foundry.cli"
    script = Path(os.path.abspath(cwd / script))
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return "model-foundry"
    return shlex.quote(_shown(script, cwd))


def _report(db: Path, dataset: dict[str, Any] | None) -> None:
    print(f"\nDuckDB report ({db}):")
    for sql in REPORT_QUERIES:
        print(run_query(sql, db))
    if dataset is not None and dataset.get("export_path"):
        print(f"\ndataset exported to {dataset['export_path']}")
    cwd = Path.cwd()
    command = cli_command(sys.argv[0], sys.executable, cwd, shutil.which("model-foundry"))
    print(
        "\nThe demo's data is its own; your data/model_foundry.duckdb was not touched. "
        "Query the demo's file with:\n"
        f"  MODEL_FOUNDRY_DUCKDB={shlex.quote(_shown(db.absolute(), cwd))} {command} query "
        '"SELECT * FROM session_overview"'
    )


# What ``demo --real`` shows of the model's own words: one of each. Summaries and
# translations carry the gate their run found; a verdict is judged here from the request it
# answered, as the dataset export judges it.
_ANSWERED = (
    "JOIN (SELECT DISTINCT ON (request_key) request_key, finish_reason, request::VARCHAR AS asked "
    "FROM llm_completions WHERE status = 'ok') c USING (request_key)"
)
REAL_QUERIES = (
    (
        "a summary",
        "SELECT slot, summary, coalesce(gate, 'kept') FROM session_summaries "
        "ORDER BY correlation_id LIMIT 1",
    ),
    (
        "a translation",
        "SELECT slot, translation, coalesce(gate, 'kept') FROM session_summary_translations "
        "ORDER BY correlation_id LIMIT 1",
    ),
    (
        "a verdict",
        "SELECT judge_slot || ', ' || coalesce(winner, '-') || ' ' || score_a || ':' || score_b, "
        f"reason, finish_reason, asked FROM dataset_judgements {_ANSWERED} "
        "WHERE status = 'ok' ORDER BY prompt_id, request_key LIMIT 1",
    ),
)


def _gate_of(text: str, finish_reason: str | None, asked: str) -> str:
    """The quality gates' cause for one answer (``kept`` if none), given the request body
    it answered."""
    prompt = body_text(json.loads(asked or "{}"))
    return gate(text, finish_reason=finish_reason, prompt=prompt) or "kept"


def _real_words(db: Path, dataset: dict[str, Any] | None) -> None:
    """A real summary, translation and verdict (scrubbed, as anything the lab's data shows
    outside DuckDB), and what the quality gates held back of the dataset."""
    print("\nWhat the model wrote (demo --real):")
    for label, sql in REAL_QUERIES:
        found = _rows(db, sql)
        if not found:
            print(f"  {label}: none was stored (see the failures above)")
            continue
        who, text, *more = found[0]
        cause = more[0] if len(more) == 1 else _gate_of(str(text), *more)
        shown = "gates: kept" if cause == "kept" else f"gates: held back as {cause}"
        print(f"  {label} ({who}; {shown}):")
        print("    " + shown_text(" ".join(str(text).split()), 400))
    held = (dataset or {}).get("held_back_by_gate") or {}
    shown = ", ".join(f"{cause}: {n}" for cause, n in held.items()) or "none"
    print(f"  the dataset export held back, by cause: {shown}")
    rate = (dataset or {}).get("agreement_rate")
    print(f"  judge agreement rate: {'n/a' if rate is None else f'{rate:.0%}'}")


def run_demo(events: int = 400, *, real: bool = False) -> int:
    print(f"publishing {events} sample events (and one malformed one)")
    _publish(events)
    # The demo's own Dagster instance (runs, event log, compute logs), kept beside its DuckDB
    # file and never in $DAGSTER_HOME, so what Dagster stored can be looked at afterwards.
    home = settings.data_dir() / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        _drain(instance)
        _downstream(instance)
        dataset = _collect(instance)
    run_example_recipes(settings.duckdb_path())
    _report(settings.duckdb_path(), dataset)
    if real:
        _real_words(settings.duckdb_path(), dataset)
    return 0


__all__ = ["EXAMPLE_ROWS", "SEED", "SESSIONS", "example_line", "run_demo", "run_example_recipes"]
