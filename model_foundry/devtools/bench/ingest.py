"""``model-foundry bench ingest``: the inbox drain against plain nats-py, in one run.

Every side reads the same N events from the same stream on the same ``nats-server`` that this
command starts, each through consumers of its own laid out like the drain's:

- ``raw``: the loop a user writes by hand with nats-py (``fetch``, then ``ack`` per message);
  ``ratio`` is the drain against it;
- ``same_path``: the drain's own pull and acknowledgement path (``lib/nats/pull.py``, one
  ``+ACK`` per message) with nothing else; ``ratio_same_path`` is what validation and DuckDB
  cost on top of it;
- the drain: :func:`model_foundry.lib.inbox.drain.drain_subject` (validation, DuckDB commit,
  acks) into a DuckDB file that holds ``--prefill`` rows before the timed part; with
  ``--prefill``, also into an empty file in the same round, and ``prefilled_over_empty`` is
  the first's best rate over the second's.

The sides alternate for ``--repeat`` rounds and each reports its best round, so a burst of
load from a neighbour on a shared machine does not decide the ratio. Every side runs in a
fresh process, so ``peak_rss_mb`` is the drain's own high-water mark, not the publisher's.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
from nats.js.api import AckPolicy, ConsumerConfig

from model_foundry.devtools.bench.process import in_fresh_process, peak_rss_mb
from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib.events import SUBJECTS
from model_foundry.lib.inbox.commit_spans import next_commit_seq
from model_foundry.lib.inbox.drain import DEFAULT_BATCH_SIZE, drain_subject
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.nats.pull import Puller
from model_foundry.lib.nats.wire import ACK
from model_foundry.lib.publish import publish_events
from model_foundry.lib.storage import connect

# Correlation ids of prefilled rows start with this, so counts can leave them out.
PREFILL_TAG = "prefill-"


def prefill_inbox(db_path: str | Path, rows: int, *, end: datetime | None = None) -> float:
    """``rows`` inbox rows in one ``INSERT ... SELECT`` over ``range()``; returns seconds.

    Like months of history before the timed events: random uuid4 ids (what publishers send,
    and the worst case for a key index), one event a second ending at ``end``, chat payloads
    of about the sample events' size.
    """
    end = end or datetime.now(UTC)
    started = time.perf_counter()
    with connect(db_path) as con:
        con.execute("SET enable_progress_bar = false")
        con.execute("BEGIN TRANSACTION")
        # One commit, so one commit number, as the writer would give it.
        seq = next_commit_seq(con)
        con.execute(
            """
            INSERT INTO pipeline_event_inbox (event_id, subject, source_subject, correlation_id,
                occurred_at, received_at, stream_seq, payload, body_sha256, published_at,
                commit_seq)
            SELECT gen_random_uuid()::VARCHAR, 'llm.chat.persist', 'llm.chat.persist',
                ? || (i // 500)::VARCHAR, t, t, i + 1,
                json_object('messages', [
                    json_object('role', 'user', 'content',
                        'Summarise the tool calls from the last coding session ' || i::VARCHAR),
                    json_object('role', 'assistant', 'content',
                        'Done: the writer now opens, writes one batch, commits and closes.')]),
                sha256(i::VARCHAR), t, ?
            FROM (SELECT i, ?::TIMESTAMPTZ - to_seconds(? - i) AS t FROM range(?) r(i))
            """,
            [PREFILL_TAG, seq, end, rows, rows],
        )
        con.execute("COMMIT")
    return time.perf_counter() - started


async def _partitions(res: NatsClient) -> dict[str, list[list[str]]]:
    """Each partition's consumer filters, as the drain's layout has them on this server."""
    async with res.jetstream() as (_nc, js):
        layout = {}
        for subject in SUBJECTS:
            partition = await res.partition(js, subject)
            layout[subject] = [
                list(i.config.filter_subjects or [i.config.filter_subject])
                for i in partition.infos.values()
            ]
        return layout


async def _reset_consumers(res: NatsClient, round_no: int) -> dict[str, list[str]]:
    """Fresh consumers at the start of the stream for every side of one round; the
    baselines' consumer names per subject."""
    async with res.jetstream() as (_nc, js):
        for info in await js.consumers_info(res.stream):
            await js.delete_consumer(res.stream, info.name)
    layout = await _partitions(res)
    names: dict[str, list[str]] = {}
    async with res.jetstream() as (_nc, js):
        for side in ("raw", "same"):
            for subject, filter_sets in layout.items():
                for n, filters in enumerate(filter_sets):
                    name = f"{side}_{round_no}_{n}_" + subject.replace(".", "_")
                    await js.add_consumer(
                        res.stream,
                        ConsumerConfig(
                            durable_name=name,
                            filter_subject=filters[0] if len(filters) == 1 else None,
                            filter_subjects=filters if len(filters) > 1 else None,
                            ack_policy=AckPolicy.EXPLICIT,
                            max_ack_pending=res.max_ack_pending,
                        ),
                    )
                    names.setdefault(side, []).append(name)
    return names


def _drain_child(url: str, db_path: str, batch_size: int, out: Any) -> None:
    async def run() -> dict[str, Any]:
        res = NatsClient(servers=url)
        started = time.perf_counter()
        totals = {"received": 0, "inserted": 0, "duplicates": 0, "dead_lettered": 0}
        for subject in SUBJECTS:
            record = await drain_subject(
                res, db_path, subject, batch_size=batch_size, fetch_timeout_s=0.2
            )
            for key in totals:
                totals[key] += getattr(record, key)
        totals["seconds"] = time.perf_counter() - started
        return totals

    result = asyncio.run(run())
    result["peak_rss_mb"] = peak_rss_mb()
    out.put(result)


async def _natspy_loop(res: NatsClient, consumer: str, batch_size: int) -> int:
    """The loop a user writes with nats-py: fetch a batch, ack each message, flush."""
    nc = await res.connect()
    js = nc.jetstream()
    sub = await js.pull_subscribe_bind(consumer, stream=res.stream)
    received = 0
    while True:
        try:
            msgs = await sub.fetch(batch_size, timeout=0.2)
        except TimeoutError:
            break
        for msg in msgs:
            await msg.ack()
        await nc.flush()
        received += len(msgs)
    await nc.close()
    return received


async def _same_path_loop(res: NatsClient, consumer: str, batch_size: int) -> int:
    """The drain's pull and ack path with nothing else: no validation, no DuckDB."""
    nc = await res.connect()
    puller = await Puller(nc, res.stream, consumer).start()
    received = 0
    while msgs := await puller.fetch(batch_size, 0.2):
        for msg in msgs:
            await nc.publish(msg.reply, ACK)
        await nc.flush()
        received += len(msgs)
    await puller.close()
    await nc.close()
    return received


_LOOPS: dict[str, Callable[[NatsClient, str, int], Any]] = {
    "raw": _natspy_loop,
    "same": _same_path_loop,
}


def _baseline_child(url: str, side: str, consumers: list[str], batch_size: int, out: Any) -> None:
    async def run() -> dict[str, Any]:
        res = NatsClient(servers=url)
        started = time.perf_counter()
        # Same shape as the drain: one connection per consumer, one after the other.
        received = 0
        for consumer in consumers:
            received += await _LOOPS[side](res, consumer, batch_size)
        return {"received": received, "seconds": time.perf_counter() - started}

    result = asyncio.run(run())
    result["peak_rss_mb"] = peak_rss_mb()
    out.put(result)


async def _publish(url: str, events: int) -> int:
    async with NatsClient(servers=url).jetstream() as (nc, _js):
        return await publish_events(nc, sample_events(events, sessions=50))


def drain_in_fresh_process(url: str, db_path: str | Path, batch_size: int) -> dict[str, Any]:
    """Every subject drained by a new process: its counts, seconds and ``peak_rss_mb``."""
    return in_fresh_process(_drain_child, url, str(db_path), batch_size)


def _stored(db_path: str) -> dict[str, int]:
    with duckdb.connect(db_path, read_only=True) as con:
        stored, distinct = con.execute(
            "SELECT count(*), count(DISTINCT event_id) FROM pipeline_event_inbox "
            "WHERE NOT starts_with(correlation_id, ?)",
            [PREFILL_TAG],
        ).fetchone()
    return {"stored": stored, "distinct": distinct}


def _copy_to_disk(template: Path, db_path: Path) -> None:
    """``template`` copied to ``db_path`` and on disk before any side is timed.

    A copy leaves its pages in the page cache for the kernel to write back later; DuckDB
    fsyncs the file at its first checkpoint, and that fsync would then write the whole copy
    inside the drain's timed part, a cost that grows with ``--prefill`` and can outweigh the
    rest of the writer's extra work (docs/benchmarks.md). A real inbox is not copied moments
    before it is drained, so the copy is flushed here, outside the timed part."""
    shutil.copyfile(template, db_path)
    fd = os.open(db_path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _round(
    server: LocalNatsServer, tmp: Path, round_no: int, batch_size: int, template: Path | None
) -> dict[str, Any]:
    names = asyncio.run(_reset_consumers(NatsClient(servers=server.url), round_no))
    result: dict[str, Any] = {
        side: in_fresh_process(_baseline_child, server.url, side, names[side], batch_size)
        for side in ("raw", "same")
    }
    # With a prefilled inbox, the same events are also drained into an empty one in the same
    # round (the first of the two alternating by round), so what the history costs is a
    # ratio of two drains run side by side, not of two bench runs.
    sides = ["drain"] if template is None else ["drain", "drain_empty"]
    if round_no % 2:
        sides.reverse()
    for n, side in enumerate(sides):
        if n:
            asyncio.run(_reset_consumers(NatsClient(servers=server.url), round_no))
        db_path = tmp / f"bench-{round_no}-{side}.duckdb"
        if side == "drain" and template is not None:
            _copy_to_disk(template, db_path)
        result[side] = drain_in_fresh_process(server.url, db_path, batch_size)
        stored = _stored(str(db_path))
        result.setdefault("stored", []).append(stored["stored"])
        result.setdefault("distinct", []).append(stored["distinct"])
        db_path.unlink()
    return result


def run_bench_ingest(
    events: int, batch_size: int = DEFAULT_BATCH_SIZE, repeat: int = 2, prefill: int = 0
) -> dict[str, Any]:
    rounds: list[dict[str, Any]] = []
    prefill_s = 0.0
    with (
        tempfile.TemporaryDirectory(prefix="mf-bench-") as tmp_name,
        LocalNatsServer(store_dir=Path(tmp_name) / "nats") as server,
    ):
        tmp = Path(tmp_name)
        asyncio.run(_publish(server.url, events))
        template = None
        if prefill:
            # History ends where the published events begin (sample_events starts them
            # `events` minutes ago), as an inbox that has been draining for months would.
            template = tmp / "prefill.duckdb"
            start = datetime.now(UTC) - timedelta(minutes=events + 1)
            prefill_s = prefill_inbox(template, prefill, end=start)
        for round_no in range(max(1, repeat)):
            rounds.append(_round(server, tmp, round_no, batch_size, template))

    def rate(side: dict[str, Any]) -> float:
        return side["received"] / side["seconds"] if side["seconds"] else 0.0

    best_raw = max(rate(r["raw"]) for r in rounds)
    best_same = max(rate(r["same"]) for r in rounds)
    best = max(rounds, key=lambda r: rate(r["drain"]))
    events_per_s = rate(best["drain"])
    result: dict[str, Any] = {
        "events": events,
        "batch_size": batch_size,
        "prefill": prefill,
        "prefill_seconds": round(prefill_s, 1),
        "rounds": len(rounds),
        "seconds": round(best["drain"]["seconds"], 3),
        "events_per_s": round(events_per_s, 1),
        "raw_events_per_s": round(best_raw, 1),
        "ratio": round(events_per_s / best_raw, 3) if best_raw else None,
        "same_path_events_per_s": round(best_same, 1),
        "ratio_same_path": round(events_per_s / best_same, 3) if best_same else None,
        "inserted": best["drain"]["inserted"],
        # Over every round and drain, not only the best: each must store each event once.
        "duplicates": max(
            s - d for r in rounds for s, d in zip(r["stored"], r["distinct"], strict=True)
        ),
        "lost": max(events - d for r in rounds for d in r["distinct"]),
        "dead_lettered": best["drain"]["dead_lettered"],
        "peak_rss_mb": max(r["drain"]["peak_rss_mb"] for r in rounds),
        "raw_peak_rss_mb": max(r["raw"]["peak_rss_mb"] for r in rounds),
    }
    if prefill:
        empty = max(rate(r["drain_empty"]) for r in rounds)
        result["empty_events_per_s"] = round(empty, 1)
        result["prefilled_over_empty"] = round(events_per_s / empty, 3) if empty else None
    return result


def main(args: Any) -> int:
    result = run_bench_ingest(
        args.events, batch_size=args.batch_size, repeat=args.repeat, prefill=args.prefill
    )
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>22}: {value}")
    return 0


__all__ = ["PREFILL_TAG", "drain_in_fresh_process", "main", "prefill_inbox", "run_bench_ingest"]
