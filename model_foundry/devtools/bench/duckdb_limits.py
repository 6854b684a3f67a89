"""``model-foundry bench duckdb``: what one DuckDB file allows, one writer at a time.

Every run, sensor and query of model-foundry shares one DuckDB file, and DuckDB lets one
process write it at a time (the others wait their turn, see ``storage.connect``). This
measures, on this machine, in one run and against baselines taken in the same run:

- ``inbox_rows_per_s_alone``: the real inbox drain (NATS -> validation -> DuckDB -> acks) of
  N events into a fresh file with no other writer;
- ``inbox_rows_per_s_with_summaries``: the same drain while another process writes session
  summaries into the same file as fast as it can (``write_summaries``, one transaction per
  summary, as the summaries asset does), and ``summaries_per_s`` that writer achieved
  (``summaries_per_s_alone``: the writer by itself);
- ``writer_sessions_per_min``: ``--writers`` processes that each open the file, write one
  row in one transaction and close it again, as many times as they can in ``--seconds``.
  Every Dagster run of this code location opens the file at least once, so this is the
  ceiling on runs per minute that write to it, whatever runs them.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from model_foundry.devtools.bench.ingest import _drain_child, _publish, _reset_consumers
from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib import storage
from model_foundry.lib.inbox.drain import DEFAULT_BATCH_SIZE
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.summaries.rows import write_summaries
from model_foundry.lib.tables.summaries import SummaryRow

SUMMARY_TEXT = "The session covered " + "tool calls, searches and a long chat; " * 25


def _summary_row(writer: str, i: int) -> SummaryRow:
    now = datetime.now(UTC)
    return SummaryRow(
        request_key=f"bench-{writer}-{i}",
        correlation_id=f"session-{i % 500}",
        chat_events=12,
        event_ids=json.dumps([f"e{i}-{k}" for k in range(12)]),
        first_event_at=now,
        last_event_at=now,
        language="en",
        summary=SUMMARY_TEXT,
        slot="kindergarten",
        model="bench-model",
        prompt_tokens=900,
        completion_tokens=180,
        latency_s=2.5,
        gen_tps=72.0,
        run_id="bench",
    )


def _summary_writer(db_path: str, stop: str, out: Any) -> None:
    """Write summaries one transaction at a time until ``stop`` exists."""
    started = time.perf_counter()
    written = 0
    while not Path(stop).exists():
        written += write_summaries(db_path, [_summary_row("w", written)])
    out.put({"summaries": written, "seconds": time.perf_counter() - started})


def _session_writer(db_path: str, name: str, seconds: float, out: Any) -> None:
    """Open, write one row, close; as often as the file lets this process in."""
    with storage.connect(db_path) as con:
        con.execute("CREATE TABLE IF NOT EXISTS bench_sessions (writer VARCHAR, n BIGINT)")
    deadline = time.monotonic() + seconds
    sessions = 0
    while time.monotonic() < deadline:
        with storage.connect(db_path) as con:
            con.execute("INSERT INTO bench_sessions VALUES (?, ?)", [name, sessions])
        sessions += 1
    out.put({"sessions": sessions})


def _spawn(target: Any, *args: Any) -> tuple[Any, Any]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, out))
    proc.start()
    return proc, out


def _summaries_alone(db_path: str, seconds: float) -> float:
    stop = f"{db_path}.stop"
    proc, out = _spawn(_summary_writer, db_path, stop)
    time.sleep(seconds)
    Path(stop).touch()
    result = out.get()
    proc.join()
    return result["summaries"] / result["seconds"]


def _drain_with_summaries(url: str, db_path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    stop = f"{db_path}.stop"
    writer, writer_out = _spawn(_summary_writer, db_path, stop)
    time.sleep(1.0)  # the writer is writing before the drain starts
    drain, drain_out = _spawn(_drain_child, url, db_path, DEFAULT_BATCH_SIZE)
    drained = drain_out.get()
    drain.join()
    Path(stop).touch()
    written = writer_out.get()
    writer.join()
    return drained, written


def _sessions_per_min(db_path: str, writers: int, seconds: float) -> int:
    procs = [_spawn(_session_writer, db_path, f"w{i}", seconds) for i in range(writers)]
    total = sum(out.get()["sessions"] for _, out in procs)
    for proc, _ in procs:
        proc.join()
    return round(total * 60 / seconds)


def run_bench_duckdb(events: int = 20000, writers: int = 3, seconds: float = 10.0) -> dict:
    with (
        tempfile.TemporaryDirectory(prefix="mf-bench-duckdb-") as tmp,
        LocalNatsServer(store_dir=Path(tmp) / "nats") as server,
    ):
        res = NatsClient(servers=server.url)
        asyncio.run(_publish(server.url, events))
        asyncio.run(_reset_consumers(res, 0))
        alone = _drain_in(Path(tmp) / "alone.duckdb", server.url)
        asyncio.run(_reset_consumers(res, 1))
        shared_db = str(Path(tmp) / "shared.duckdb")
        together, written = _drain_with_summaries(server.url, shared_db)
        summaries_alone = _summaries_alone(str(Path(tmp) / "summaries.duckdb"), seconds)
        one = _sessions_per_min(str(Path(tmp) / "one.duckdb"), 1, seconds)
        many = _sessions_per_min(str(Path(tmp) / "many.duckdb"), writers, seconds)
    alone_rate = alone["inserted"] / alone["seconds"]
    together_rate = together["inserted"] / together["seconds"]
    return {
        "events": events,
        "inbox_rows_per_s_alone": round(alone_rate, 1),
        "inbox_rows_per_s_with_summaries": round(together_rate, 1),
        "inbox_ratio_with_summaries": round(together_rate / alone_rate, 3),
        "summaries_per_s_alone": round(summaries_alone, 1),
        "summaries_per_s_during_drain": round(written["summaries"] / written["seconds"], 1),
        "writers": writers,
        "writer_sessions_per_min_one_process": one,
        "writer_sessions_per_min": many,
        "seconds_per_measure": seconds,
    }


def _drain_in(db_path: Path, url: str) -> dict[str, Any]:
    proc, out = _spawn(_drain_child, url, str(db_path), DEFAULT_BATCH_SIZE)
    result = out.get()
    proc.join()
    return result


def main(args: Any) -> int:
    result = run_bench_duckdb(args.events, writers=args.writers, seconds=args.seconds)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>36}: {value}")
    return 0


__all__ = ["main", "run_bench_duckdb"]
