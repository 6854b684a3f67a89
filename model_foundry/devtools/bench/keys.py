"""``model-foundry bench keys``: the LLM tables without their keys, beside big tables.

Two DuckDB files, a small one (:data:`SMALL` completions) and one of ``--rows``, are each
written by SQL in the layout from before (``llm_completions`` keyed by ``attempt_id`` with an
index on ``request_key``; ``session_summaries``, ``session_summary_translations``,
``session_summary_parts`` and ``dataset_samples`` with their PRIMARY KEYs), with ``rows``
completions (random sha256 request keys, answers of about 300 bytes, one a second up to
an hour ago) and a quarter as many rows in each other table (summaries and translations
one every 4 s, parts, samples in versions of :data:`VERSION_ROWS`). Then, each in a fresh
process:

- ``migrate_s``: the one-time move to the keyless layout (``storage.connect``), with its
  ``peak_rss_mb``;
- ``lookup_s``: :meth:`CompletionStore.finished` of 100 keys, half of them stored (the
  scan that replaced the index), best of 3;
- ``summary_check_s``: the check a summary makes before it is stored (its session's
  summaries since its queue time, an hour back), ``sample_check_s``: a batch of 100
  samples' check against their version, best of 3 each; with the process's ``peak_rss_mb``.

``*_ratio`` is the big file's figure against the small one's. ``views_s`` then times each
ad-hoc view read whole (:func:`~model_foundry.devtools.bench.downstream.view_times`), for
``slot_throughput_hourly`` and ``dataset_stats``, which read these tables.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.devtools.bench.downstream import view_times
from model_foundry.devtools.bench.process import in_fresh_process, peak_rss_mb
from model_foundry.lib import storage
from model_foundry.lib.datasets.samples import STORED_SAMPLES_SQL
from model_foundry.lib.llm.store import CompletionStore
from model_foundry.lib.summaries.rows import STORED_SUMMARY_SQL
from model_foundry.lib.tables.base import Table
from model_foundry.lib.tables.completions import LLM_COMPLETIONS
from model_foundry.lib.tables.datasets import DATASET_SAMPLES
from model_foundry.lib.tables.summaries import (
    SESSION_SUMMARIES,
    SESSION_SUMMARY_PARTS,
    SESSION_SUMMARY_TRANSLATIONS,
)

SMALL = 1000
VERSION_ROWS = 100_000
LOOKUP_KEYS = 100
# The layout before: each table's key, and llm_completions' index.
OLD_KEYS: dict[Table[Any], str] = {
    LLM_COMPLETIONS: "attempt_id",
    SESSION_SUMMARIES: "request_key",
    SESSION_SUMMARY_TRANSLATIONS: "summary_key",
    SESSION_SUMMARY_PARTS: "summary_key, level, part_index",
    DATASET_SAMPLES: "dataset, version, request_key",
}
OLD_INDEX = "CREATE INDEX llm_completions_request_key ON llm_completions (request_key)"

# Row i of each table, one a second (completions) or every 4 s (the others) up to ``?``.
_FILL: dict[Table[Any], str] = {
    LLM_COMPLETIONS: """
INSERT INTO llm_completions BY NAME
SELECT gen_random_uuid()::VARCHAR AS attempt_id, sha256('k' || i::VARCHAR) AS request_key,
       'session_summary' AS task, 'summary' AS role, 'slot-' || (i % 3)::VARCHAR AS slot,
       'model' AS model, 'llama.cpp' AS runtime,
       CASE WHEN i % 20 = 0 THEN 'error' ELSE 'ok' END AS status, 1 AS attempt,
       120 AS prompt_tokens, 60 AS completion_tokens, 1.5 AS latency_s, 0.2 AS ttft_s,
       400.0 AS prompt_tps, 40.0 AS gen_tps, 'stop' AS finish_reason,
       repeat('The session fixed the writer and measured it. ', 6) || i::VARCHAR AS content,
       '{}' AS params, '{}' AS request,
       ?::TIMESTAMPTZ - to_seconds(? - i) AS started_at,
       ?::TIMESTAMPTZ - to_seconds(? - i) AS recorded_at
FROM range(?) r(i)
""",
    SESSION_SUMMARIES: """
INSERT INTO session_summaries BY NAME
SELECT sha256('s' || i::VARCHAR) AS request_key, 'session-' || (i // 20)::VARCHAR AS correlation_id,
       i % 20 + 1 AS chat_events, '[]' AS event_ids, 'en' AS language,
       repeat('A summary of the session. ', 8) AS summary,
       ?::TIMESTAMPTZ - to_seconds(4 * (? - i)) AS created_at
FROM range(?) r(i)
""",
    SESSION_SUMMARY_TRANSLATIONS: """
INSERT INTO session_summary_translations BY NAME
SELECT sha256('s' || i::VARCHAR) AS summary_key, 'session-' || (i // 20)::VARCHAR AS correlation_id,
       sha256('t' || i::VARCHAR) AS request_key, 'en' AS source_lang, 'ja' AS target_lang,
       'A summary.' AS source_text, 'まとめ。' AS translation,
       ?::TIMESTAMPTZ - to_seconds(4 * (? - i)) AS created_at
FROM range(?) r(i)
""",
    SESSION_SUMMARY_PARTS: """
INSERT INTO session_summary_parts BY NAME
SELECT sha256('s' || (i // 4)::VARCHAR) AS summary_key,
       'session-' || (i // 80)::VARCHAR AS correlation_id, 1 AS level, i % 4 AS part_index,
       sha256('p' || i::VARCHAR) AS request_key, 1 AS first_item, 2 AS last_item,
       ?::TIMESTAMPTZ - to_seconds(? - i) AS created_at
FROM range(?) r(i)
""",
    DATASET_SAMPLES: f"""
INSERT INTO dataset_samples BY NAME
SELECT 'lab' AS dataset, 'v' || lpad((i // {VERSION_ROWS})::VARCHAR, 4, '0') AS version,
       sha256('d' || i::VARCHAR) AS request_key, 'p' || i::VARCHAR AS prompt_id,
       'file:prompts.jsonl' AS source, 'summary' AS role, 0 AS sample_index, '[]' AS messages,
       'A prompt.' AS prompt, repeat('An answer. ', 20) AS response,
       false AS is_empty, false AS is_truncated,
       ?::TIMESTAMPTZ - to_seconds(4 * (? - i)) AS created_at
FROM range(?) r(i)
""",
}


# Columns added with the keyless layout, which files before did not have.
ADDED_COLUMNS = ("key_prefix", "cached_prompt_tokens", "gate")


def keyed_ddl(table: Table[Any], key: str) -> str:
    """The table as files before had it: its PRIMARY KEY, without the columns added since."""
    lines = [
        line
        for line in table.ddl.splitlines()
        if not any(line.strip().startswith(f"{c} ") for c in ADDED_COLUMNS)
    ]
    ddl = "\n".join(lines)
    end = ddl.rindex(")")
    return f"{ddl[:end].rstrip().rstrip(',')},\n        PRIMARY KEY ({key})\n    )"


def fill_keyed(db_path: Path, rows: int, end: datetime) -> float:
    """A file of the keyed layout: ``rows`` completions, a quarter as many of the others."""
    started = time.perf_counter()
    with duckdb.connect(str(db_path)) as con:
        con.execute("SET enable_progress_bar = false")
        for table, key in OLD_KEYS.items():
            con.execute(keyed_ddl(table, key))
            n = rows if table is LLM_COMPLETIONS else max(1, rows // 4)
            params = [end, n, end, n, n] if table is LLM_COMPLETIONS else [end, n, n]
            con.execute(_FILL[table], params)
        con.execute(OLD_INDEX)
        con.execute("CHECKPOINT")
    return time.perf_counter() - started


def _migrate(db_path: str, queue: Any) -> None:
    started = time.perf_counter()
    with storage.connect(db_path) as con:
        con.execute("SELECT 1")
    queue.put({"migrate_s": time.perf_counter() - started, "peak_rss_mb": peak_rss_mb()})


def _best(run: Any, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


@dataclass(frozen=True)
class Looked:
    lookup_s: float
    found: int
    summary_check_s: float
    sample_check_s: float
    peak_rss_mb: float


def _lookups(db_path: str, rows: int, end: datetime, queue: Any) -> None:
    stored = [hashlib.sha256(f"k{i}".encode()).hexdigest() for i in range(1, rows, 20)]
    keys = stored[-LOOKUP_KEYS // 2 :] + [f"missing-{i}" for i in range(LOOKUP_KEYS // 2)]
    store = CompletionStore(db_path)
    found = len(store.finished(keys))
    lookup_s = _best(lambda: store.finished(keys))
    summaries = max(1, rows // 4)
    newest = hashlib.sha256(f"s{summaries - 1}".encode()).hexdigest()
    session = f"session-{(summaries - 1) // 20}"
    since = end - timedelta(hours=1) - storage.CLOCK_STEP_MARGIN
    version = f"v{(summaries - 1) // VERSION_ROWS:04d}"
    newest_samples = range(max(0, summaries - LOOKUP_KEYS), summaries)
    samples = [hashlib.sha256(f"d{i}".encode()).hexdigest() for i in newest_samples]
    with storage.connect(db_path) as con:
        summary_check_s = _best(
            lambda: con.execute(STORED_SUMMARY_SQL, [since, session, newest]).fetchone()
        )
        sample_check_s = _best(
            lambda: con.execute(STORED_SAMPLES_SQL, ["lab", version, samples]).fetchall()
        )
    queue.put(Looked(lookup_s, found, summary_check_s, sample_check_s, peak_rss_mb()))


def _side(directory: Path, rows: int) -> dict[str, Any]:
    db = directory / f"keyed-{rows}.duckdb"
    end = datetime.now(UTC) - timedelta(hours=1)
    fill_s = fill_keyed(db, rows, end)
    migrated = in_fresh_process(_migrate, str(db), timeout_s=7200)
    looked = in_fresh_process(_lookups, str(db), rows, end, timeout_s=3600)
    return {
        "rows": rows,
        "fill_s": round(fill_s, 1),
        "file_mb": round(db.stat().st_size / 2**20),
        "migrate_s": round(migrated["migrate_s"], 2),
        "migrate_peak_rss_mb": migrated["peak_rss_mb"],
        **{k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(looked).items()},
        # slot_throughput_hourly reads llm_completions, dataset_stats dataset_samples.
        "views_s": view_times(db),
    }


def run_bench_keys(rows: int) -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="bench-keys-"))
    try:
        small = _side(directory, min(SMALL, rows))
        big = _side(directory, rows)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    ratios = {
        f"{key}_ratio": round(big[key] / small[key], 2) if small[key] else None
        for key in ("lookup_s", "summary_check_s", "sample_check_s", "peak_rss_mb")
    }
    return {**ratios, "small": small, "big": big}


def main(args: Any) -> int:
    result = run_bench_keys(args.rows)
    if args.json:
        print(json.dumps(result))
        return 0
    for key, value in result.items():
        print(f"{key:>22}: {value}")
    return 0


__all__ = ["ADDED_COLUMNS", "fill_keyed", "keyed_ddl", "main", "run_bench_keys"]
