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

from model_foundry import settings


class UserError(RuntimeError):
    """An expected condition the user can fix; printed without a traceback."""


def _expected_errors() -> tuple[type[BaseException], ...]:
    from model_foundry.local_nats import NatsServerError
    from model_foundry.nats_resource import NatsUnavailableError
    from model_foundry.storage import DuckDBBusyError

    errors: list[type[BaseException]] = [
        UserError,
        NatsUnavailableError,
        NatsServerError,
        DuckDBBusyError,
        FileNotFoundError,
    ]
    from model_foundry.slot_config import NoSlotForRoleError, SlotFileError

    errors += [SlotFileError, NoSlotForRoleError]
    return tuple(errors)


def _nats():
    from model_foundry.nats_resource import nats_resource_from_env

    return nats_resource_from_env(resolve_secrets=True)


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
    from model_foundry.events import SUBJECTS

    res = _nats()
    print(f"{'subject':<28} {'consumer':<34} {'pending':>8} {'ack_pending':>12}")
    for subject in SUBJECTS:
        p = res.pending_for(subject)
        print(f"{subject:<28} {p.consumer:<34} {p.num_pending:>8} {p.num_ack_pending:>12}")
    return 0


def cmd_nats_serve(args: argparse.Namespace) -> int:
    from model_foundry.local_nats import LocalNatsServer

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
    from model_foundry.publish import publish_events, read_jsonl, sample_events

    if args.file:
        events = read_jsonl(Path(args.file), default_subject=args.subject)
    else:
        events = sample_events(args.sample, sessions=args.sessions, seed=args.seed)

    async def run() -> int:
        res = _nats()
        nc = await res.connect()
        try:
            await res.ensure_stream(nc.jetstream())
            return await publish_events(nc, events)
        finally:
            await nc.close()

    count = asyncio.run(run())
    print(f"published {count} events to {_nats().redacted_servers}")
    return 0


def cmd_drain(args: argparse.Namespace) -> int:
    from model_foundry.events import SUBJECTS
    from model_foundry.ingest import drain_subject

    res = _nats()
    subjects = [args.subject] if args.subject else list(SUBJECTS)
    for subject in subjects:
        record = asyncio.run(
            drain_subject(res, settings.duckdb_path(), subject, batch_size=args.batch_size)
        )
        print(
            f"{subject}: received {record.received}, inserted {record.inserted}, "
            f"duplicates {record.duplicates}, dead-lettered {record.dead_lettered}"
        )
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from model_foundry.query import run_query

    print(run_query(args.sql, settings.duckdb_path(), max_rows=args.max_rows))
    return 0


def cmd_bench_ingest(args: argparse.Namespace) -> int:
    from model_foundry.bench_ingest import main

    return main(args)


def cmd_bench_e2e(args: argparse.Namespace) -> int:
    from model_foundry.bench_e2e import main

    return main(args)


def cmd_up(args: argparse.Namespace) -> int:
    from model_foundry.devstack import up

    return up(port=args.port)


def cmd_demo(args: argparse.Namespace) -> int:
    from model_foundry.devstack import demo

    return demo(events=args.events)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="model-foundry",
        description="NATS events into DuckDB, prompts to GPU model slots, datasets out.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

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

    p = sub.add_parser("query", help="run SQL against the DuckDB file and print a table")
    p.add_argument("sql")
    p.add_argument("--max-rows", type=int, default=50)
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("up", help="local NATS + slot simulator + Dagster UI and daemon")
    p.add_argument("--port", type=int, default=3000, help="Dagster UI port")
    p.set_defaults(func=cmd_up)

    p = sub.add_parser("demo", help="one-shot: sample events through the whole pipeline")
    p.add_argument("--events", type=int, default=200)
    p.set_defaults(func=cmd_demo)

    bench = sub.add_parser("bench", help="benchmarks, reported against a baseline in the same run")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    p = bench_sub.add_parser("ingest", help="inbox drain vs plain nats-py fetch+ack")
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=2, help="alternating rounds; best of each")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_ingest)

    p = bench_sub.add_parser(
        "e2e", help="steady publishing through the real sensors and runs (daemon + NATS)"
    )
    p.add_argument("--rate", type=float, default=200.0, help="events per second")
    p.add_argument("--seconds", type=float, default=30.0, help="how long to publish")
    p.add_argument("--timeout", type=float, default=300.0, help="give up waiting after this")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_e2e)

    from model_foundry import bench_slots, datasets, slot_simulator

    datasets.add_cli(sub)
    slot_simulator.add_cli(sub)
    bench_slots.add_cli(bench_sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
