"""The inbox asset against a real nats-server, real DuckDB files and a real Dagster instance.

What the unit, integration and system tests of ``defs/inbox/test_assets.py`` share."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

from model_foundry.defs.inbox.assets import pipeline_event_inbox_record
from model_foundry.defs.inbox.checks import inbox_checks
from model_foundry.defs.resources import FoundryDuckDB, NatsResource
from model_foundry.lib.inbox.drain import InboxRecord
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.dagster_helpers import quiet_instance

RECORD_KEYS = set(InboxRecord(subject="x").as_dict())


def materialize(
    res: NatsClient, db_path: Path, subject: str, instance: dg.DagsterInstance | None = None
) -> dg.ExecuteInProcessResult:
    if instance is None:
        with quiet_instance() as own:
            return materialize(res, db_path, subject, own)
    return dg.materialize(
        [pipeline_event_inbox_record, *inbox_checks],
        partition_key=subject,
        resources={"nats": NatsResource.of(res), "duckdb": FoundryDuckDB(database=str(db_path))},
        instance=instance,
        run_config={"ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3}}}},
    )


def rows(db_path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def consumer_counts(res: NatsClient, subject: str) -> tuple[int, int]:
    pending = res.pending_for(subject)
    return pending.num_pending, pending.num_ack_pending


CRASH_SCRIPT = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from model_foundry.lib.inbox.drain import drain_subject
    from model_foundry.lib.nats.connection import NatsClient

    def die(msgs):
        print(f"committed {len(msgs)}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    res = NatsClient(servers=sys.argv[1], ack_wait_s=2.0)
    asyncio.run(drain_subject(res, sys.argv[2], sys.argv[3], batch_size=25, after_commit=die))
    """
)
