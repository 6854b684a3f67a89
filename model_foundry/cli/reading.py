"""Reading what is stored: ``metrics`` (a Prometheus exporter) and ``query``."""

from __future__ import annotations

import argparse

from model_foundry.cli._common import Subparsers, nats_client
from model_foundry.lib import settings
from model_foundry.lib.errors import UserError


def cmd_metrics(args: argparse.Namespace) -> int:
    import signal
    import threading

    from model_foundry.lib.metrics.exporter import Exporter, ExporterSettings, run_forever
    from model_foundry.lib.slots.config import load_slot_file

    slot_file = load_slot_file(settings.slot_file_path())
    exporter = Exporter(
        ExporterSettings(
            db_path=settings.duckdb_path(),
            nats=None if args.no_nats else nats_client(),
            slots=list(slot_file.slots.values()),
            slot_leases=(
                nats_client() if settings.slot_leases_wanted() and not args.no_nats else None
            ),
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


def cmd_query(args: argparse.Namespace) -> int:
    from model_foundry.lib.query import run_query

    print(run_query(args.sql, settings.duckdb_path(), max_rows=args.max_rows))
    return 0


def register(sub: Subparsers) -> None:
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
