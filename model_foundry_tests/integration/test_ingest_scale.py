"""Months of history in the inbox: a drain into a 2M-row inbox works with bounded memory.

With the event_id primary key this failed outright: random ids make DuckDB load the whole
key index (about 78 MB per million rows) and, under the drain's 64 MB cap, every batch into
an inbox past about 700k rows ended in an OutOfMemoryException. The prefill is one
``INSERT ... SELECT`` over ``range()`` with random uuid4 ids; the 5M and 10M figures come
from ``model-foundry bench ingest --prefill``, not from the suite.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import duckdb

from model_foundry.devtools.bench.ingest import PREFILL_TAG, drain_in_fresh_process, prefill_inbox
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.nats_helpers import publish

PREFILL = 2_000_000
EVENTS = 10_000


def fresh_consumers(res: NatsClient) -> None:
    """Drop the consumers so the next drain reads the stream from its start again."""

    async def run() -> None:
        async with res.jetstream() as (_nc, js):
            for info in await js.consumers_info(res.stream):
                await js.delete_consumer(res.stream, info.name)

    asyncio.run(run())


def new_rows(db_path: Path) -> tuple[int, int]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(
            "SELECT count(*), count(DISTINCT event_id) FROM pipeline_event_inbox "
            "WHERE NOT starts_with(correlation_id, ?)",
            [PREFILL_TAG],
        ).fetchone()


def test_a_drain_into_a_two_million_row_inbox_keeps_its_memory(
    nats_client: NatsClient, tmp_path: Path
) -> None:
    publish(nats_client, sample_events(EVENTS, sessions=20))
    empty_db, full_db = tmp_path / "empty.duckdb", tmp_path / "full.duckdb"
    prefill_inbox(full_db, PREFILL)

    empty = drain_in_fresh_process(nats_client.servers, empty_db, 1000)
    fresh_consumers(nats_client)
    full = drain_in_fresh_process(nats_client.servers, full_db, 1000)

    assert (empty["inserted"], full["inserted"]) == (EVENTS, EVENTS)
    assert new_rows(full_db) == (EVENTS, EVENTS)
    with duckdb.connect(str(full_db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM pipeline_event_inbox").fetchone() == (
            PREFILL + EVENTS,
        )
    # Peak RSS of the draining process, against the same drain into an empty file.
    assert full["peak_rss_mb"] <= 1.5 * empty["peak_rss_mb"], (empty, full)
