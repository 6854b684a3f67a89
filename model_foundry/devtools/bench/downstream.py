"""``model-foundry bench downstream``: what a downstream run costs beside a big inbox.

Two DuckDB files, a nearly empty one (:data:`SMALL` rows) and one of ``--prefill`` rows, are
each filled by SQL with a realistic mix (:func:`fill_mix`) and their typed tables caught up
once. Then, ``--repeat`` times, ``--new`` events are added (one commit, continuing the newest
sessions) and a fresh process, as a Dagster run would be, times:

- ``refresh_s``: the typed tables' refresh (:func:`refresh_inbox_tables`), the step's own time
  without the process start, with the process's ``peak_rss_mb``;
- ``select_s``: selecting the sessions that need a summary and reading their messages
  (:func:`sessions_to_summarise`): after the catch-up every session counts as summarised
  (the queue is emptied, as the summary runs would have), so the queue holds the sessions the
  new events touched, as in a pipeline that keeps up;
- ``exporter_s``: the Prometheus exporter's read of DuckDB (:func:`read_figures`).

After the rounds, ``views_s`` times reading each view of :data:`TIMED_VIEWS` whole (every
row and column of ``SELECT * FROM view``), once, on a fresh read-only connection.

Each figure is the best of the rounds; ``*_ratio`` is the big inbox's against the small one's.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.devtools.bench.process import in_fresh_process, peak_rss_mb
from model_foundry.lib.events import CHAT_PERSIST, FLOW_LINEAGE, SEMANTIC_SEARCH, TOOL_CALL
from model_foundry.lib.inbox.commit_spans import next_commit_seq
from model_foundry.lib.inbox.typed import refresh_inbox_tables
from model_foundry.lib.metrics.figures import read_figures
from model_foundry.lib.storage import connect
from model_foundry.lib.summaries.pending import sessions_to_summarise
from model_foundry.lib.tables.summaries import SESSION_SUMMARY_QUEUE

SMALL = 1000
EVENTS_PER_SESSION = 300
# Rows per commit of the fill: each is one commit of the writer, as a long drain makes many.
FILL_COMMIT_ROWS = 500_000
SUMMARY_BATCH = 8
# The views people query ad hoc, whose time at 10M inbox rows the docs state.
TIMED_VIEWS = ("session_overview", "tool_call_stats", "slot_throughput_hourly", "dataset_stats")
_VIEW_READS = {v: f"SELECT * FROM {v}" for v in TIMED_VIEWS}

# Event i: session i // 300, one a second from 2025-01-01. Of every 20 events 12 are chat
# (3 messages each, usage on the event), 4 tool calls (one in 50 an error), 3 lineage (nodes
# and edges in turn) and 1 semantic search: 60 / 20 / 15 / 5 %.
_MIX = f"""
INSERT INTO pipeline_event_inbox BY NAME
SELECT gen_random_uuid()::VARCHAR AS event_id, subject, subject AS source_subject,
       'bench-' || (i // {EVENTS_PER_SESSION})::VARCHAR AS correlation_id,
       t AS occurred_at, t AS received_at, i + 1 AS stream_seq, payload,
       sha256(i::VARCHAR) AS body_sha256, t AS published_at, ?::BIGINT AS commit_seq
FROM (
    SELECT i, TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i) AS t,
           CASE WHEN i % 20 < 12 THEN '{CHAT_PERSIST}' WHEN i % 20 < 16 THEN '{TOOL_CALL}'
                WHEN i % 20 < 19 THEN '{FLOW_LINEAGE}' ELSE '{SEMANTIC_SEARCH}' END AS subject,
           CASE
               WHEN i % 20 < 12 THEN json_object(
                   'model', 'model-' || (i % 3)::VARCHAR, 'slot', 'slot-' || (i % 2)::VARCHAR,
                   'usage', json_object('prompt_tokens', 120 + i % 50, 'completion_tokens', 40),
                   'messages', [
                       json_object('role', 'user', 'content',
                           'Summarise the tool calls from the last coding session ' || i::VARCHAR),
                       json_object('role', 'assistant', 'content',
                           'Done: the writer now opens, writes one batch, commits and closes.'),
                       json_object('role', 'user', 'content', 'And the reads downstream?')])
               WHEN i % 20 < 16 THEN json_object(
                   'tool', 'tool-' || (i % 7)::VARCHAR,
                   'status', CASE WHEN i % 50 = 12 THEN 'error' ELSE 'ok' END,
                   'duration_ms', i % 900, 'arguments', json_object('path', 'src/' || i::VARCHAR),
                   'result', 'ok: 12 lines')
               WHEN i % 20 < 19 AND i % 2 = 0 THEN json_object(
                   'kind', 'node', 'node_id', 'n' || i::VARCHAR, 'label', 'step')
               WHEN i % 20 < 19 THEN json_object(
                   'kind', 'edge', 'source', 'n' || (i - 1)::VARCHAR, 'target', 'n' || i::VARCHAR)
               ELSE json_object('query', 'duckdb zonemap ' || i::VARCHAR, 'results',
                   [json_object('path', 'notes/duckdb.md', 'score', 0.91)])
           END AS payload
    FROM range(?, ?) r(i)
)
"""


def fill_mix(db_path: str | Path, start: int, stop: int) -> float:
    """Events ``start`` .. ``stop - 1`` of the mix, one commit per :data:`FILL_COMMIT_ROWS`;
    returns seconds."""
    started = time.perf_counter()
    with connect(db_path) as con:
        con.execute("SET enable_progress_bar = false")
        for low in range(start, stop, FILL_COMMIT_ROWS):
            con.execute("BEGIN TRANSACTION")
            con.execute(_MIX, [next_commit_seq(con), low, min(stop, low + FILL_COMMIT_ROWS)])
            con.execute("COMMIT")
        con.execute("CHECKPOINT")
    return time.perf_counter() - started


@dataclass(frozen=True)
class Measured:
    refresh_s: float
    added: int
    select_s: float
    exporter_s: float
    peak_rss_mb: float


def _measure(db_path: str, queue: Any) -> None:
    started = time.perf_counter()
    result = refresh_inbox_tables(db_path)
    refresh_s = time.perf_counter() - started
    started = time.perf_counter()
    sessions_to_summarise(db_path, SUMMARY_BATCH)
    select_s = time.perf_counter() - started
    started = time.perf_counter()
    with duckdb.connect(db_path, read_only=True) as con:
        read_figures(con)
    exporter_s = time.perf_counter() - started
    added = sum(result.added.values())
    queue.put(Measured(refresh_s, added, select_s, exporter_s, peak_rss_mb()))


def measure_in_fresh_process(db_path: Path) -> Measured:
    return in_fresh_process(_measure, str(db_path), timeout_s=3600)


def view_times(db_path: str | Path) -> dict[str, float]:
    """Seconds to read each of :data:`TIMED_VIEWS` whole, each on a fresh connection."""
    times = {}
    for view in TIMED_VIEWS:
        with duckdb.connect(str(db_path), read_only=True) as con:
            started = time.perf_counter()
            # Every row and column fetched: a count(*) would let DuckDB skip the aggregates.
            con.sql(_VIEW_READS[view]).to_arrow_table()
            times[view] = round(time.perf_counter() - started, 4)
    return times


def _side(directory: Path, rows: int, new: int, repeat: int) -> dict[str, Any]:
    db = directory / f"inbox-{rows}.duckdb"
    fill_s = fill_mix(db, 0, rows)
    started = time.perf_counter()
    refresh_inbox_tables(db)
    catch_up_s = time.perf_counter() - started
    with connect(db) as con:
        con.execute(SESSION_SUMMARY_QUEUE.delete_all_sql())
    rounds = []
    for n in range(repeat):
        fill_mix(db, rows + n * new, rows + (n + 1) * new)
        rounds.append(measure_in_fresh_process(db))
    best = {
        key: round(min(getattr(m, key) for m in rounds), 4)
        for key in ("refresh_s", "select_s", "exporter_s", "peak_rss_mb")
    }
    return {
        "rows": rows,
        "fill_s": round(fill_s, 1),
        "catch_up_s": round(catch_up_s, 1),
        "file_mb": round(db.stat().st_size / 2**20),
        **best,
        "views_s": view_times(db),
        "rounds": [asdict(m) for m in rounds],
    }


def run_bench_downstream(prefill: int, *, new: int = 1000, repeat: int = 3) -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="bench-downstream-"))
    try:
        small = _side(directory, min(SMALL, prefill), new, repeat)
        big = _side(directory, prefill, new, repeat)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    ratios = {
        f"{key}_ratio": round(big[key] / small[key], 2) if small[key] else None
        for key in ("refresh_s", "select_s", "exporter_s", "peak_rss_mb")
    }
    return {"new_events": new, **ratios, "small": small, "big": big}


def main(args: Any) -> int:
    result = run_bench_downstream(args.prefill, new=args.new, repeat=args.repeat)
    if args.json:
        print(json.dumps(result))
        return 0
    for key, value in result.items():
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k != "rounds"}
        print(f"{key:>18}: {value}")
    return 0


__all__ = [
    "TIMED_VIEWS",
    "fill_mix",
    "main",
    "measure_in_fresh_process",
    "run_bench_downstream",
    "view_times",
]
