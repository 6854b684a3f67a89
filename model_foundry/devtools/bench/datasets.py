"""``model-foundry bench datasets``: a session export with hygiene against a plain one.

For each ``--records`` size a DuckDB file is filled by SQL with session records of a
realistic size (20 turns, about 8 KB: a system prompt, a task, nine tool calls with their
results and an answer), one in 50 with planted secrets (a GitHub token in the task, an
OpenAI key in a tool result) and one in 40 a near duplicate of the record before it. Then, in
fresh processes (as a Dagster run would be), the same records are exported twice:

- **plain**: read from DuckDB, built into records, written as JSONL; nothing else;
- **hygiene**: ``export_session_dataset``: scrubbing, near-duplicate clusters, splits, quality
  flags, every view, the card and the manifest.

Both report records/s and MB/s (MB of the plain JSONL, so the two share one measure) and
their process's peak RSS; the hygiene export scrubs in worker processes (one a core, or
``MODEL_FOUNDRY_EXPORT_WORKERS``), and each worker's peak is added to its own. ``recall``
is the share of planted secrets found nowhere in the hygiene export's files. Targets:
hygiene at least 0.25x the plain throughput; the peak RSS of the largest size within 1.5x
of the smallest. Then the decontamination run
(``decontamination.py``): the export with the eval-set check against the export without it.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from model_foundry.devtools.bench.process import in_fresh_process, peak_rss_mb
from model_foundry.lib.exports.hygiene import ExportHygiene, export_hygiene
from model_foundry.lib.storage import connect
from model_foundry.lib.trajectories.export import SessionExport, export_session_dataset
from model_foundry.lib.trajectories.sessions import SessionWindow, export_sessions, session_records

FILL_BATCH = 50_000
TURNS = 20
# Planted: every 50th record; a near duplicate: every 40th is its predecessor again.
PLANT_EVERY = 50
DUPLICATE_EVERY = 40

_SEED = f"CASE WHEN i % {DUPLICATE_EVERY} = 1 THEN i - 1 ELSE i END"
_SYSTEM = (
    "You are a coding agent working in the lab's repository. Use the tools to read and "
    "change files and to run the tests; answer briefly when the task is done. Keep the "
    "public names, run the tests after each change and show the diff before answering."
)
_SYSTEM_SQL = _SYSTEM.replace("'", "''")
_TURNS_SQL = f"""
INSERT INTO session_turns BY NAME
WITH recs AS (
    SELECT i, {_SEED} AS seed, TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i) AS start_at
    FROM range(?, ?) r(i)
), turns AS (SELECT i, seed, start_at, t FROM recs, range({TURNS}) u(t))
SELECT 'bench-' || i::VARCHAR AS correlation_id, 'main' AS thread, t::INTEGER AS turn_index,
       CASE WHEN t = 0 THEN 'system' WHEN t = 1 THEN 'user'
            WHEN t % 2 = 0 OR t = {TURNS - 1} THEN 'assistant' ELSE 'tool' END AS role,
       CASE
           WHEN t = 0 THEN '{_SYSTEM_SQL}'
           WHEN t = 1 THEN 'Task ' || seed::VARCHAR || ': refactor the writer in src/m'
                || seed::VARCHAR || '.py so each batch commits once; ' || md5(seed::VARCHAR)
                || repeat(' keep the public names and the tests green', 6)
                || CASE WHEN i % {PLANT_EVERY} = 0
                        THEN ' CI uses GITHUB_TOKEN ghp_' || left(md5(i::VARCHAR || 'g')
                             || md5(i::VARCHAR || 'h'), 36) ELSE '' END
           WHEN t = {TURNS - 1} THEN 'Done: the writer in src/m' || seed::VARCHAR
                || '.py commits each batch once; the tests pass.'
                || CASE WHEN seed <> i THEN ' (asked again)' ELSE '' END
           WHEN t % 2 = 0 THEN NULL
           ELSE 'def handle_' || seed::VARCHAR || '_' || t::VARCHAR || '(batch):\\n'
                || repeat('    rows = [validate(e) for e in batch]  # ' || md5(seed::VARCHAR
                || t::VARCHAR) || '\\n', 9)
                || CASE WHEN i % {PLANT_EVERY} = 0 AND t = 3
                        THEN 'OPENAI_API_KEY=sk-proj-' || md5(i::VARCHAR || 'k')
                             || md5(i::VARCHAR || 'l') || '\\n' ELSE '' END
       END AS content,
       NULL AS reasoning,
       CASE WHEN t >= 2 AND t % 2 = 0 AND t < {TURNS - 1}
            THEN json_array(json_object('id', 'call_' || i::VARCHAR || '_' || t::VARCHAR,
                 'type', 'function', 'function', json_object('name', 'read_file',
                 'arguments', json_object('path', 'src/m' || seed::VARCHAR || '.py',
                 'max_lines', t * 10)::VARCHAR)))
            ELSE json_array() END AS tool_calls,
       CASE WHEN t >= 3 AND t % 2 = 1 AND t < {TURNS - 1}
            THEN 'call_' || i::VARCHAR || '_' || (t - 1)::VARCHAR END AS tool_call_id,
       CASE WHEN t >= 3 AND t % 2 = 1 AND t < {TURNS - 1} THEN 'read_file' END AS name,
       CASE WHEN t % 2 = 0 OR t = {TURNS - 1} THEN 'naughty' END AS slot,
       CASE WHEN t % 2 = 0 OR t = {TURNS - 1} THEN 'gemma-4-31b-it' END AS model,
       'e' || i::VARCHAR || '-' || t::VARCHAR AS event_id, start_at + to_seconds(t) AS occurred_at,
       NULL AS finish_reason, false AS tool_error, 'chat' AS origin
FROM turns
"""
_THREADS_SQL = f"""
INSERT INTO session_trajectories BY NAME
SELECT 'bench-' || i::VARCHAR AS correlation_id, 'main' AS thread, {TURNS} AS turns,
       start_at AS first_at, start_at + to_seconds({TURNS - 1}) AS last_at,
       ['gemma-4-31b-it'] AS models, ['naughty'] AS slots, {TURNS} AS events,
       0 AS tool_events, 0 AS tool_events_matched, 0 AS tool_errors,
       json_object('correlation_id', 'bench-' || i::VARCHAR, 'thread', 'main',
           'turns', {TURNS}, 'chat_identities', json_array(), 'calls', json_array(),
           'tools', json_object(), 'models', ['gemma-4-31b-it'], 'slots', ['naughty'],
           'event_ids', json_array(), 'first_at', strftime(start_at, '%Y-%m-%dT%H:%M:%S+00:00'),
           'last_at', strftime(start_at + to_seconds({TURNS - 1}), '%Y-%m-%dT%H:%M:%S+00:00'),
           'tool_events', 0, 'tool_events_matched', 0, 'tool_errors', 0) AS state
FROM (
    SELECT i, TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i) AS start_at
    FROM range(?, ?) r(i)
)
"""
_PLANTED = re.compile(r"ghp_[0-9a-f]{36}|sk-proj-[0-9a-f]{64}")


def fill(db_path: Path, records: int) -> float:
    started = time.perf_counter()
    with connect(db_path) as con:
        con.execute("SET enable_progress_bar = false")
        for low in range(0, records, FILL_BATCH):
            high = min(records, low + FILL_BATCH)
            con.execute("BEGIN TRANSACTION")
            con.execute(_TURNS_SQL, [low, high])
            con.execute(_THREADS_SQL, [low, high])
            con.execute("COMMIT")
        con.execute("CHECKPOINT")
    return time.perf_counter() - started


@dataclass(frozen=True)
class Measured:
    seconds: float
    records: int
    jsonl_mb: float
    peak_rss_mb: float
    # Scrub worker processes (``MODEL_FOUNDRY_EXPORT_WORKERS``); their memory is in the peak.
    workers: int = 0


def _plain(db_path: str, out: str, queue: Any) -> None:
    started = time.perf_counter()
    with connect(db_path) as con:
        sessions = export_sessions(con, SessionWindow(include_active=True))
    n = 0
    with open(out, "w", encoding="utf-8") as fh:
        for record in session_records(db_path, sessions):
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    seconds = time.perf_counter() - started
    queue.put(Measured(seconds, n, Path(out).stat().st_size / 2**20, peak_rss_mb()))


def _hygiene(db_path: str, out_root: str, queue: Any) -> None:
    made: list[ExportHygiene] = []

    def hygiene(*args: Any) -> ExportHygiene:
        made.append(export_hygiene(*args))
        return made[-1]

    started = time.perf_counter()
    request = SessionExport(
        name="bench", out_root=Path(out_root), version="v1", include_active=True
    )
    outcome = export_session_dataset(db_path, request, hygiene)
    seconds = time.perf_counter() - started
    # The parent's peak and each scrub worker's, added up.
    peak = peak_rss_mb() + sum(h.worker_peak_rss_mb() for h in made)
    workers = made[0].workers if made else 0
    queue.put(Measured(seconds, outcome.figures.records, 0.0, round(peak, 1), workers))


def leaked_secrets(folder: Path) -> set[str]:
    """Planted-looking secrets anywhere in the export: text files as text, Parquet row by row."""
    found: set[str] = set()
    for path in folder.rglob("*"):
        if path.suffix in (".jsonl", ".json", ".md"):
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    found.update(_PLANTED.findall(line))
        elif path.suffix == ".parquet":
            # pre_buffer off: it keeps every row group read until the reader closes.
            for batch in pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=2000):
                for row in batch.to_pylist():
                    found.update(_PLANTED.findall(json.dumps(row, ensure_ascii=False)))
    return found


def bench_size(directory: Path, records: int) -> dict[str, Any]:
    db = directory / f"sessions-{records}.duckdb"
    fill_s = fill(db, records)
    plain = in_fresh_process(
        _plain, str(db), str(directory / f"plain-{records}.jsonl"), timeout_s=6 * 3600
    )
    out_root = directory / f"exports-{records}"
    hygiene = in_fresh_process(_hygiene, str(db), str(out_root), timeout_s=6 * 3600)
    planted = 2 * len(range(0, records, PLANT_EVERY))
    leaked = leaked_secrets(out_root / "bench" / "v1")
    manifest = json.loads((out_root / "bench" / "v1" / "manifest.json").read_text())
    mb = plain.jsonl_mb
    return {
        "records": records,
        "fill_s": round(fill_s, 1),
        "plain": {**asdict(plain), "records_per_s": round(records / plain.seconds),
                  "mb_per_s": round(mb / plain.seconds, 1)},
        "hygiene": {**asdict(hygiene), "records_per_s": round(records / hygiene.seconds),
                    "mb_per_s": round(mb / hygiene.seconds, 1)},
        "throughput_ratio": round(plain.seconds / hygiene.seconds, 3),
        "planted_secrets": planted,
        "recall": round(1 - len(leaked) / planted, 4) if planted else None,
        "duplicates_removed": manifest["duplicates_removed"],
        "redactions_by_kind": manifest["redactions_by_kind"],
    }  # fmt: skip


def independent_corpus_recall(seed: int = 7) -> dict[str, Any]:
    """The exports' scrubber on devtools/secrets_corpus/, which was written from public descriptions
    of credential formats rather than from the scrubber's rules: the bench's own plants above
    only show the shapes the rules were written for."""
    from model_foundry.devtools.secrets_corpus import corpus, evaluate
    from model_foundry.lib.hygiene.record import RecordScrubber

    scrubber = RecordScrubber(salt=b"bench")
    cases = corpus(seed)
    report = evaluate(cases, lambda text: scrubber.scrub(text)[0])
    worst = sorted(report.by_kind.items(), key=lambda kv: kv[1].recall)[:3]
    return {
        "values": report.total.plants,
        "kinds": len(report.by_kind),
        "recall": round(report.recall, 4),
        "fragment_free": round(report.fragment_free_share, 4),
        "negatives_kept": round(report.negatives_kept_share, 4),
        "words_kept": round(report.keep_words_kept_share, 4),
        "lowest_kinds": {kind: round(t.recall, 4) for kind, t in worst},
    }


def scrub_throughput(megabytes: float = 20.0) -> dict[str, Any]:
    """The record scrubber's text throughput with the backstop on and off, on realistic text:
    this repository's own Python source and the independent corpus's session texts (dense
    with secrets, the worst case), repeated to ``megabytes``. Each string is new to the
    scrubber (a counter is appended), so its memory of seen strings does not help."""
    from model_foundry.lib.hygiene.config import HygieneConfig
    from model_foundry.lib.hygiene.record import RecordScrubber

    root = Path(__file__).parents[3]
    texts = [p.read_text(encoding="utf-8") for p in sorted((root / "model_foundry").rglob("*.py"))]
    corpus = root / "model_foundry_tests" / "fixtures" / "independent"
    for name in ("secrets.jsonl", "negatives.jsonl"):
        lines = (corpus / name).read_text(encoding="utf-8").splitlines()
        texts += [json.loads(line)["text"] for line in lines]
    chunks: list[str] = []
    size = 0
    while size < megabytes * 2**20:
        for text in texts:
            chunks.append(f"{text}\n# {len(chunks)}")
            size += len(chunks[-1])
    result: dict[str, Any] = {"chars": size}
    for setting in (False, True):
        scrubber = RecordScrubber(HygieneConfig(backstop=setting), salt=b"bench")
        started = time.perf_counter()
        for chunk in chunks:
            scrubber.scrub(chunk)
        seconds = time.perf_counter() - started
        result["backstop_on" if setting else "backstop_off"] = {
            "seconds": round(seconds, 2),
            "mb_per_s": round(size / 2**20 / seconds, 2),
        }
    result["ratio"] = round(result["backstop_off"]["seconds"] / result["backstop_on"]["seconds"], 3)
    return result


def run_bench_datasets(sizes: list[int]) -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="bench-datasets-"))
    try:
        results = [bench_size(directory, n) for n in sorted(sizes)]
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    small, big = results[0], results[-1]
    rss = big["hygiene"]["peak_rss_mb"] / small["hygiene"]["peak_rss_mb"]
    return {
        "sizes": results,
        "independent_corpus": independent_corpus_recall(),
        "throughput_ratio": min(r["throughput_ratio"] for r in results),
        "rss_ratio": round(rss, 2),
        "targets": {"throughput_ratio": ">= 0.25", "rss_ratio": "<= 1.5"},
    }


def main(args: Any) -> int:
    """The hygiene sizes, or with ``--scrub-only`` the scrubber alone; the decontamination
    run is ``decontamination.main``, which the CLI calls after this."""
    if getattr(args, "scrub_only", False):
        r = scrub_throughput(args.scrub_mb)
        if args.json:
            print(json.dumps(r))
            return 0
        print(
            f"scrubber on {r['chars'] / 2**20:.1f} MB: backstop off "
            f"{r['backstop_off']['mb_per_s']} MB/s, on {r['backstop_on']['mb_per_s']} MB/s; "
            f"ratio {r['ratio']}"
        )
        return 0
    result = run_bench_datasets(args.records)
    if args.json:
        print(json.dumps(result))
        return 0
    _print_hygiene(result)
    return 0


def _print_hygiene(result: dict[str, Any]) -> None:
    for r in result["sizes"]:
        print(
            f"{r['records']:>9} records: plain {r['plain']['records_per_s']} rec/s "
            f"{r['plain']['mb_per_s']} MB/s, {r['plain']['peak_rss_mb']:.0f} MB; hygiene "
            f"{r['hygiene']['records_per_s']} rec/s {r['hygiene']['mb_per_s']} MB/s, "
            f"{r['hygiene']['peak_rss_mb']:.0f} MB; ratio {r['throughput_ratio']}; recall "
            f"{r['recall']}; duplicates removed {r['duplicates_removed']}"
        )
    c = result["independent_corpus"]
    print(
        f"independent corpus: {c['values']} values of {c['kinds']} kinds, recall {c['recall']}, "
        f"fragment-free {c['fragment_free']}, negatives kept {c['negatives_kept']}, "
        f"words kept {c['words_kept']}"
    )
    print(f"throughput ratio {result['throughput_ratio']} (>= 0.25), RSS ratio "
          f"{result['rss_ratio']} (<= 1.5)")  # fmt: skip


__all__ = ["fill", "leaked_secrets", "main", "run_bench_datasets", "scrub_throughput"]
