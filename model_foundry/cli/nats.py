"""``nats setup | status | serve``: the stream, its consumers, a local server."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from model_foundry.cli._common import Subparsers, nats_client
from model_foundry.lib import settings
from model_foundry.lib.text_table import text_table

if TYPE_CHECKING:
    # Only a type here: every CLI command builds this parser, and nats-py (with aiohttp) is
    # a tenth of a second of CPU that no command but the NATS ones needs.
    from model_foundry.lib.nats.consumers import ConsumerPending


def cmd_nats_setup(args: argparse.Namespace) -> int:
    res = nats_client()
    changes = res.setup()
    if changes:
        for change in changes:
            print(change)
    else:
        print(f"stream {res.stream} and its consumers already exist on {res.redacted_servers}")
    return 0


def status_table(pending: Sequence[ConsumerPending]) -> str:
    """One row per partition; columns as wide as their longest name (2.9's per-name
    consumers make long ones)."""
    return text_table(
        ("subject", "consumer", "pending", "ack_pending"),
        [(p.subject, p.consumer, p.num_pending, p.num_ack_pending) for p in pending],
    )


def cmd_nats_status(args: argparse.Namespace) -> int:
    from model_foundry.lib.events import SUBJECTS

    res = nats_client()
    print(status_table([res.pending_for(subject) for subject in SUBJECTS]))
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


def register(sub: Subparsers) -> None:
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
