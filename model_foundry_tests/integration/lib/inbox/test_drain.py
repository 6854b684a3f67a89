"""The drain when storing fails: no message leaves the queue without a row or a dead letter:
the integration tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pytest
from nats.aio.msg import Msg

from model_foundry.lib.inbox.drain import drain_subject
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_INBOX
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, publish, publish_raw
from model_foundry_tests.pipeline_helpers import wait_for
from model_foundry_tests.shared.lib.inbox.drain import (  # noqa: F401 - fixtures are found by name
    SUBJECT,
    counts,
    drain,
    impatient_fixture,
    tool_event,
)


def rows(db_path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(sql).fetchall()


@BOTH_NATS_LINES
def test_a_message_whose_commit_fails_until_its_deliveries_run_out_is_a_dead_letter(
    impatient: NatsClient, db_path: Path
) -> None:
    # DuckDB refuses one event (a constraint this file's owner added), so every batch that
    # holds it fails: before, JetStream gave up after max_deliver and the event was gone.
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(db_path)) as con:
        con.execute(
            PIPELINE_EVENT_INBOX.ddl.replace(
                "event_id VARCHAR NOT NULL",
                "event_id VARCHAR NOT NULL CHECK (event_id <> 'poison')",
            )
        )
    events = {i: tool_event(i) for i in ("a", "b", "poison", "c")}
    publish(impatient, events.values())

    for delivery in (1, 2):
        with pytest.raises(duckdb.ConstraintException, match="CHECK constraint"):
            drain(impatient, db_path)  # the batch's own error, not "transaction is aborted"
        assert rows(db_path, "SELECT count(*) FROM pipeline_event_inbox") == [(0,)], delivery
        assert sum(counts(impatient)) == 4  # nothing acknowledged, nothing dropped
        time.sleep(impatient.ack_wait_s + 0.5)
    record = drain(impatient, db_path)  # the third delivery: the last the budget allows

    assert (record.inserted, record.dead_lettered) == (3, 1)
    assert sorted(r[0] for r in rows(db_path, "SELECT event_id FROM pipeline_event_inbox")) == [
        "a",
        "b",
        "c",
    ]
    [(event_id, reason, raw)] = rows(
        db_path, "SELECT event_id, reason, raw FROM pipeline_event_dead_letter"
    )
    assert event_id == "poison"
    assert reason.startswith("not stored after 3 deliveries: ConstraintException")
    assert bytes(raw) == events["poison"].body
    assert counts(impatient) == (0, 0)


@BOTH_NATS_LINES
def test_dead_letters_keep_their_bytes_after_the_stream_is_recreated(
    nats_client: NatsClient, db_path: Path
) -> None:
    publish_raw(nats_client, [(SUBJECT, b"not json 1"), (SUBJECT, b"not json 2")])
    assert drain(nats_client, db_path).dead_lettered == 2

    async def recreate() -> None:
        # What `make clean` does: the stream goes, the DuckDB file stays.
        async with nats_client.jetstream() as (_nc, js):
            await js.delete_stream(nats_client.stream)

    asyncio.run(recreate())
    publish_raw(nats_client, [(SUBJECT, b"garbage A"), (SUBJECT, b"garbage B")])  # seq 1, 2

    def crash(_msgs: object) -> None:
        raise RuntimeError("killed between commit and ack")

    # Committed and not acknowledged: the redelivery must not store them a second time.
    with pytest.raises(RuntimeError, match="between commit and ack"):
        asyncio.run(drain_subject(nats_client, db_path, SUBJECT, after_commit=crash))
    # JetStream redelivers them once ack_wait has passed.
    record = wait_for(
        lambda: (r := drain(nats_client, db_path)).received and r,
        timeout_s=30,
        what="the committed, unacknowledged dead letters to come back",
    )

    assert (record.received, record.dead_lettered) == (2, 2)
    stored = rows(
        db_path,
        "SELECT stream_seq, raw FROM pipeline_event_dead_letter "
        "ORDER BY dead_lettered_at, stream_seq",
    )
    assert [(seq, bytes(raw)) for seq, raw in stored] == [
        (1, b"not json 1"),
        (2, b"not json 2"),
        (1, b"garbage A"),
        (2, b"garbage B"),
    ]
    assert counts(nats_client) == (0, 0)


@BOTH_NATS_LINES
def test_each_ack_follows_its_own_batchs_commit_while_the_next_batch_is_validated(
    nats_client: NatsClient, db_path: Path
) -> None:
    # The drain validates batch k+1 on the event loop while batch k commits in the writer's
    # thread. A watcher on the ack subjects checks, as each ack reaches the server, that the
    # commit of the batch holding that message had already returned.
    publish(nats_client, [tool_event(f"p{i}") for i in range(1200)])
    committed: set[str] = set()
    acked: list[str] = []
    early: list[str] = []

    def after_commit(msgs: Sequence[Msg]) -> None:
        committed.update(m.reply for m in msgs)

    async def run() -> object:
        watcher = await nats_client.connect()

        async def on_ack(msg: Msg) -> None:
            acked.append(msg.subject)
            if msg.subject not in committed:
                early.append(msg.subject)

        await watcher.subscribe("$JS.ACK.>", cb=on_ack)
        await watcher.flush()
        try:
            record = await drain_subject(
                nats_client,
                db_path,
                SUBJECT,
                batch_size=100,
                fetch_timeout_s=0.3,
                after_commit=after_commit,
            )
            deadline = time.monotonic() + 10
            while len(acked) < 1200 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return record
        finally:
            await watcher.close()

    record = asyncio.run(run())
    assert (record.inserted, record.batches) == (1200, 12)
    assert early == []
    assert len(acked) == 1200 and set(acked) == committed
    assert rows(db_path, "SELECT count(DISTINCT event_id) FROM pipeline_event_inbox") == [(1200,)]
    assert counts(nats_client) == (0, 0)
