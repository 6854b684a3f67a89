"""The story ``make demo`` tells: sample events in, the real assets run, a report out."""

from __future__ import annotations

import asyncio

import dagster as dg

from model_foundry import settings
from model_foundry.events import SUBJECTS
from model_foundry.nats_resource import nats_resource_from_env
from model_foundry.publish import publish_events, sample_events
from model_foundry.query import run_query
from model_foundry.resources import duckdb_resource_from_env


def _publish(count: int) -> int:
    async def run() -> int:
        res = nats_resource_from_env(resolve_secrets=True)
        nc = await res.connect()
        try:
            await res.ensure_stream(nc.jetstream())
            published = await publish_events(nc, sample_events(count, sessions=4, seed=11))
            # One event that breaks the contract, to show where such events go.
            await nc.jetstream().publish("llm.tool_call", b'{"event_id": "demo-bad"}')
            return published + 1
        finally:
            await nc.close()

    return asyncio.run(run())


def run_demo(events: int = 200) -> int:
    from model_foundry.inbox import pipeline_event_inbox_record

    print(f"publishing {events} sample events (and one malformed one)")
    _publish(events)
    resources = {
        "nats": nats_resource_from_env(resolve_secrets=True),
        "duckdb": duckdb_resource_from_env(),
    }
    with dg.instance_for_test() as instance:
        for subject in SUBJECTS:
            result = dg.materialize(
                [pipeline_event_inbox_record],
                partition_key=subject,
                resources=resources,
                instance=instance,
            )
            record = result.output_for_node("pipeline_event_inbox_record")
            print(
                f"  {subject:<26} received {record['received']:>4}  inserted "
                f"{record['inserted']:>4}  dead-lettered {record['dead_lettered']}"
            )
    db = settings.duckdb_path()
    print(f"\nDuckDB report ({db}):")
    print(
        run_query(
            "SELECT subject, count(*) AS events, count(DISTINCT correlation_id) AS sessions, "
            "min(occurred_at) AS first, max(occurred_at) AS last "
            "FROM pipeline_event_inbox GROUP BY subject ORDER BY subject",
            db,
        )
    )
    print(run_query("SELECT subject, reason FROM pipeline_event_dead_letter LIMIT 5", db))
    return 0


__all__ = ["run_demo"]
