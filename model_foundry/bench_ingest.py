"""``model-foundry bench ingest``: the inbox drain against plain nats-py, in one run.

Both sides read the same events from the same ``nats-server`` that this command starts: the
baseline fetches and acknowledges them with nothing else, the measured side runs
:func:`model_foundry.ingest.drain_subject` (validation, DuckDB commit, acks). Each side runs
in its own fresh process so ``peak_rss_mb`` is the drain's own high-water mark, not the
publisher's.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.events import SUBJECTS
from model_foundry.ingest import DEFAULT_BATCH_SIZE, drain_subject
from model_foundry.local_nats import LocalNatsServer
from model_foundry.nats_resource import NatsResource
from model_foundry.publish import OutgoingEvent, publish_events, sample_events

RAW_STREAM = "BENCH_RAW"
RAW_PREFIX = "bench.raw."


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


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


def _raw_child(url: str, batch_size: int, out: Any) -> None:
    async def run() -> dict[str, Any]:
        res = NatsResource(servers=url)
        nc = await res.connect()
        js = nc.jetstream()
        started = time.perf_counter()
        received = 0
        for subject in SUBJECTS:
            sub = await js.pull_subscribe_bind(_raw_consumer(subject), stream=RAW_STREAM)
            while True:
                try:
                    msgs = await sub.fetch(batch_size, timeout=0.2)
                except TimeoutError:
                    break
                for msg in msgs:
                    await msg.ack()
                await nc.flush()
                received += len(msgs)
        seconds = time.perf_counter() - started
        await nc.close()
        return {"received": received, "seconds": seconds}

    result = asyncio.run(run())
    result["peak_rss_mb"] = _peak_rss_mb()
    out.put(result)


def _raw_consumer(subject: str) -> str:
    return "raw_" + subject.replace(".", "_")


async def _publish_both(url: str, events: int) -> int:
    from nats.js.api import AckPolicy, ConsumerConfig

    res = NatsResource(servers=url)
    nc = await res.connect()
    js = nc.jetstream()
    await res.ensure_stream(js)
    await js.add_stream(name=RAW_STREAM, subjects=[RAW_PREFIX + ">"])
    for subject in SUBJECTS:
        await js.add_consumer(
            RAW_STREAM,
            ConsumerConfig(
                durable_name=_raw_consumer(subject),
                filter_subject=RAW_PREFIX + subject,
                ack_policy=AckPolicy.EXPLICIT,
                max_ack_pending=res.max_ack_pending,
            ),
        )

    def both() -> Any:
        for event in sample_events(events, sessions=50):
            yield event
            yield OutgoingEvent(RAW_PREFIX + event.subject, "", event.body)

    published = await publish_events(nc, both())
    await nc.close()
    return published // 2


def _in_child(target: Any, *args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, out))
    proc.start()
    result = out.get()
    proc.join()
    return result


def run_bench_ingest(events: int, batch_size: int = DEFAULT_BATCH_SIZE) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="mf-bench-") as tmp,
        LocalNatsServer(store_dir=Path(tmp) / "nats") as server,
    ):
        db_path = str(Path(tmp) / "bench.duckdb")
        asyncio.run(_publish_both(server.url, events))
        raw = _in_child(_raw_child, server.url, batch_size)
        drained = _in_child(_drain_child, server.url, db_path, batch_size)
        with duckdb.connect(db_path, read_only=True) as con:
            stored = con.execute("SELECT count(*) FROM pipeline_event_inbox").fetchone()[0]
            distinct = con.execute(
                "SELECT count(DISTINCT event_id) FROM pipeline_event_inbox"
            ).fetchone()[0]
    events_per_s = drained["received"] / drained["seconds"] if drained["seconds"] else 0.0
    raw_per_s = raw["received"] / raw["seconds"] if raw["seconds"] else 0.0
    return {
        "events": events,
        "batch_size": batch_size,
        "seconds": round(drained["seconds"], 3),
        "events_per_s": round(events_per_s, 1),
        "raw_events_per_s": round(raw_per_s, 1),
        "ratio": round(events_per_s / raw_per_s, 3) if raw_per_s else None,
        "inserted": drained["inserted"],
        "duplicates": stored - distinct,
        "lost": events - distinct,
        "dead_lettered": drained["dead_lettered"],
        "peak_rss_mb": drained["peak_rss_mb"],
        "raw_peak_rss_mb": raw["peak_rss_mb"],
    }


def main(args: Any) -> int:
    result = run_bench_ingest(args.events, batch_size=args.batch_size)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")
    return 0


__all__ = ["main", "run_bench_ingest"]
