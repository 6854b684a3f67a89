"""``model-foundry bench ingest``: the inbox drain against plain nats-py, in one run.

Both sides read the same N events from the same stream on the same ``nats-server`` that this
command starts, each through consumers of its own: the baseline fetches and acknowledges
with nothing else; the measured side runs :func:`model_foundry.lib.inbox.drain.drain_subject`
(validation, DuckDB commit, acks) into a fresh DuckDB file. The sides alternate for
``--repeat`` rounds and each reports its best round, so a burst of load from a neighbour on
a shared machine does not decide the ratio. Every round runs in a fresh process, so
``peak_rss_mb`` is the drain's own high-water mark, not the publisher's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing as mp
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
from nats.js.api import AckPolicy, ConsumerConfig
from nats.js.errors import NotFoundError

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.events import SUBJECTS, subjects_for
from model_foundry.lib.inbox.drain import DEFAULT_BATCH_SIZE, drain_subject
from model_foundry.lib.inbox.publish import publish_events, sample_events
from model_foundry.lib.nats.resource import NatsResource, consumer_name


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _raw_consumer(subject: str, round_no: int) -> str:
    return f"raw_{round_no}_" + subject.replace(".", "_")


async def _reset_consumers(res: NatsResource, round_no: int) -> None:
    """Fresh consumers at the start of the stream for both sides of one round."""
    nc = await res.connect()
    js = nc.jetstream()
    for subject in SUBJECTS:
        with contextlib.suppress(NotFoundError):
            await js.delete_consumer(res.stream, consumer_name(subject))
        await js.add_consumer(res.stream, res.consumer_config(subject))
        await js.add_consumer(
            res.stream,
            ConsumerConfig(
                durable_name=_raw_consumer(subject, round_no),
                filter_subjects=subjects_for(subject),
                ack_policy=AckPolicy.EXPLICIT,
                max_ack_pending=res.max_ack_pending,
            ),
        )
    await nc.close()


def _drain_child(url: str, db_path: str, batch_size: int, out: Any) -> None:
    async def run() -> dict[str, Any]:
        res = NatsResource(servers=url)
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
    result["peak_rss_mb"] = _peak_rss_mb()
    out.put(result)


def _raw_child(url: str, batch_size: int, round_no: int, out: Any) -> None:
    async def run() -> dict[str, Any]:
        res = NatsResource(servers=url)
        started = time.perf_counter()
        received = 0
        # Same shape as the drain: one connection and one consumer per subject.
        for subject in SUBJECTS:
            nc = await res.connect()
            js = nc.jetstream()
            sub = await js.pull_subscribe_bind(_raw_consumer(subject, round_no), stream=res.stream)
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
        return {"received": received, "seconds": time.perf_counter() - started}

    result = asyncio.run(run())
    result["peak_rss_mb"] = _peak_rss_mb()
    out.put(result)


async def _publish(url: str, events: int) -> int:
    async with NatsResource(servers=url).jetstream() as (nc, _js):
        return await publish_events(nc, sample_events(events, sessions=50))


def _in_child(target: Any, *args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, out))
    proc.start()
    result = out.get()
    proc.join()
    return result


def run_bench_ingest(
    events: int, batch_size: int = DEFAULT_BATCH_SIZE, repeat: int = 2
) -> dict[str, Any]:
    rounds: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="mf-bench-") as tmp,
        LocalNatsServer(store_dir=Path(tmp) / "nats") as server,
    ):
        res = NatsResource(servers=server.url)
        asyncio.run(_publish(server.url, events))
        for round_no in range(max(1, repeat)):
            asyncio.run(_reset_consumers(res, round_no))
            db_path = str(Path(tmp) / f"bench-{round_no}.duckdb")
            raw = _in_child(_raw_child, server.url, batch_size, round_no)
            drained = _in_child(_drain_child, server.url, db_path, batch_size)
            with duckdb.connect(db_path, read_only=True) as con:
                stored, distinct = con.execute(
                    "SELECT count(*), count(DISTINCT event_id) FROM pipeline_event_inbox"
                ).fetchone()
            rounds.append({"raw": raw, "drain": drained, "stored": stored, "distinct": distinct})
            Path(db_path).unlink()

    def rate(side: dict[str, Any]) -> float:
        return side["received"] / side["seconds"] if side["seconds"] else 0.0

    best_raw = max(rate(r["raw"]) for r in rounds)
    best = max(rounds, key=lambda r: rate(r["drain"]))
    events_per_s = rate(best["drain"])
    return {
        "events": events,
        "batch_size": batch_size,
        "rounds": len(rounds),
        "seconds": round(best["drain"]["seconds"], 3),
        "events_per_s": round(events_per_s, 1),
        "raw_events_per_s": round(best_raw, 1),
        "ratio": round(events_per_s / best_raw, 3) if best_raw else None,
        "inserted": best["drain"]["inserted"],
        # Over every round, not only the best: each round must store each event once.
        "duplicates": max(r["stored"] - r["distinct"] for r in rounds),
        "lost": max(events - r["distinct"] for r in rounds),
        "dead_lettered": best["drain"]["dead_lettered"],
        "peak_rss_mb": max(r["drain"]["peak_rss_mb"] for r in rounds),
        "raw_peak_rss_mb": max(r["raw"]["peak_rss_mb"] for r in rounds),
    }


def main(args: Any) -> int:
    result = run_bench_ingest(args.events, batch_size=args.batch_size, repeat=args.repeat)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")
    return 0


__all__ = ["main", "run_bench_ingest"]
