"""``bench datasets``' decontamination run: a session export with the eval-set check against
the same export without it, in the same run.

The bench's session records (``datasets.fill``) are exported twice in fresh processes, once
with ``MODEL_FOUNDRY_EVAL_SETS`` unset and once naming an eval set of ``items`` items whose
index was built before (in a process of its own: a nightly export reuses it). The eval set
is HumanEval-shaped (``task_id``, ``prompt``, ``canonical_solution``, about 100 words an item)
and made of random words, except one item in ten of those that fit: the task and the final
answer of every ``PLANT_STEP``-th session, so those sessions (and the near duplicate that
repeats each) must be held back. Targets: the export with the check at most 1.5x the time of
the one without, and its peak RSS at most 300 MB above it.

``--decontamination-of samples`` runs the same on a collection's export (``export_samples``)
of short rows instead of 8 KB sessions: a question and an answer of a few sentences, the
planted rows' answer being the task and its final answer. Its export costs far less a row,
so the check's share of it is larger, and a million rows take minutes, not an hour.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from model_foundry.devtools.bench.process import in_fresh_process, peak_rss_mb

PLANT_STEP = 1000
_WORDS = 100
_VOCAB = 20_000


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_rss_mb: float
    records: int
    held_back: int
    # Scrub worker processes (``MODEL_FOUNDRY_EXPORT_WORKERS``); their memory is in the peak.
    workers: int = 0


def planted_seeds(rows: int, items: int) -> list[int]:
    """The sessions whose task is an eval item: every PLANT_STEP-th, at most a tenth of the
    items."""
    return list(range(0, rows, PLANT_STEP))[: max(items // 10, 1)]


def _task(seed: int) -> tuple[str, str]:
    """A bench session's task (its first repetition) and final answer, as ``datasets.fill``'s
    SQL writes them."""
    md5 = hashlib.md5(str(seed).encode()).hexdigest()  # as DuckDB's md5() writes it
    task = (
        f"Task {seed}: refactor the writer in src/m{seed}.py so each batch commits once; {md5} "
        "keep the public names and the tests green"
    )
    return task, f"Done: the writer in src/m{seed}.py commits each batch once; the tests pass."


def write_eval_set(path: Path, rows: int, items: int, seed: int = 11) -> int:
    """``items`` items in JSON Lines, the planted ones among them; the planted count."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(_VOCAB)]
    plants = {n * 10: s for n, s in enumerate(planted_seeds(rows, items))}
    with path.open("w", encoding="utf-8") as out:
        for n in range(items):
            if n in plants:
                prompt, solution = _task(plants[n])
            else:
                words = rng.choices(vocab, k=_WORDS)
                prompt = 'def f():\n    """' + " ".join(words[:70]) + '\n    """\n'
                solution = "    return " + " ".join(words[70:]) + "\n"
            line = {"task_id": f"Bench/{n}", "prompt": prompt, "canonical_solution": solution}
            out.write(json.dumps(line) + "\n")
    return len(plants)


def _environment(data_dir: str, eval_sets: str | None) -> None:
    os.environ["MODEL_FOUNDRY_DATA_DIR"] = data_dir
    os.environ.pop("MODEL_FOUNDRY_EVAL_SETS", None)
    if eval_sets:
        os.environ["MODEL_FOUNDRY_EVAL_SETS"] = eval_sets


def _build(data_dir: str, eval_sets: str, queue: Any) -> None:
    _environment(data_dir, eval_sets)
    from model_foundry.lib.decontamination.match import decontaminator

    started = time.perf_counter()
    decontaminator()
    queue.put(Run(time.perf_counter() - started, peak_rss_mb(), 0, 0))


def _export(db_path: str, out_root: str, data_dir: str, eval_sets: str | None, queue: Any) -> None:
    _environment(data_dir, eval_sets)
    from model_foundry.lib.exports.hygiene import ExportHygiene, export_hygiene
    from model_foundry.lib.trajectories.export import SessionExport, export_session_dataset

    made: list[ExportHygiene] = []

    def hygiene(*args: Any) -> ExportHygiene:
        made.append(export_hygiene(*args))
        return made[-1]

    started = time.perf_counter()
    request = SessionExport(name="bench", out_root=Path(out_root), version="v1",
                            include_active=True)  # fmt: skip
    outcome = export_session_dataset(db_path, request, hygiene)
    seconds = time.perf_counter() - started
    found = outcome.figures.decontamination
    held = sum(s["rows_held_back"] for s in found["eval_sets"].values()) if found else 0
    # The parent's peak and each scrub worker's, added up.
    peak = peak_rss_mb() + sum(h.worker_peak_rss_mb() for h in made)
    workers = made[0].workers if made else 0
    queue.put(Run(seconds, round(peak, 1), outcome.figures.records, held, workers))


# Sentences the sample answers are made of, a few to an answer: prose the gates keep.
_SENTENCES = [
    f"The writer {verb} each batch {how}, so a crash {result}."
    for verb in ("commits", "flushes", "stores", "checks", "writes")
    for how in ("once", "in one transaction", "after its rows validate", "before the next")
    for result in ("loses nothing", "repeats no row", "leaves the file whole")
]
_SAMPLES_SQL = f"""
INSERT INTO dataset_samples BY NAME
SELECT 'bench' AS dataset, 'v1' AS version, 'k' || i::VARCHAR AS request_key,
       'p' || i::VARCHAR AS prompt_id, 'bench' AS source, 'writer' AS role, 0 AS sample_index,
       json_array(json_object('role', 'user', 'content', q)) AS messages, q AS prompt,
       a AS response, NULL AS reasoning, 's0' AS slot, 'bench-model' AS model,
       '{{}}' AS params, 20 AS prompt_tokens, 60 AS completion_tokens, 'stop' AS finish_reason,
       false AS is_empty, false AS is_truncated, NULL AS run_id,
       TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i) AS created_at
FROM (
    SELECT i,
        'Question ' || i::VARCHAR || ': how should the writer in src/m' || i::VARCHAR
            || '.py commit its batches?' AS q,
        CASE WHEN i % {PLANT_STEP} = 0 AND i < ?
            THEN 'Task ' || i::VARCHAR || ': refactor the writer in src/m' || i::VARCHAR
                || '.py so each batch commits once; ' || md5(i::VARCHAR)
                || ' keep the public names and the tests green Done: the writer in src/m'
                || i::VARCHAR || '.py commits each batch once; the tests pass.'
            ELSE 'For src/m' || i::VARCHAR || '.py: '
                || list_element(?, (i % {len(_SENTENCES)})::INTEGER + 1) || ' '
                || list_element(?, ((i // 7) % {len(_SENTENCES)})::INTEGER + 1) || ' '
                || list_element(?, ((i // 49) % {len(_SENTENCES)})::INTEGER + 1)
        END AS a
    FROM range(?, ?) r(i)
)
"""


def fill_samples(db_path: Path, rows: int, items: int) -> float:
    """``rows`` samples of one collection's version ``bench``/``v1``; planted as
    :func:`planted_seeds` says (their row number is their seed)."""
    from model_foundry.lib.storage import connect

    seeds = planted_seeds(rows, items)
    limit = seeds[-1] + 1 if seeds else 0
    started = time.perf_counter()
    with connect(db_path) as con:
        for low in range(0, rows, 200_000):
            high = min(rows, low + 200_000)
            con.execute(_SAMPLES_SQL, [limit, _SENTENCES, _SENTENCES, _SENTENCES, low, high])
        con.execute("CHECKPOINT")
    return time.perf_counter() - started


def _export_samples(
    db_path: str, out_root: str, data_dir: str, eval_sets: str | None, queue: Any
) -> None:
    _environment(data_dir, eval_sets)
    from model_foundry.lib.datasets.sample_export import export_samples
    from model_foundry.lib.exports.hygiene import export_hygiene
    from model_foundry.lib.exports.published import ExportTarget

    started = time.perf_counter()
    hygiene = export_hygiene(Path(db_path), "bench", 0.05)
    outcome = export_samples(db_path, ExportTarget(Path(out_root), "bench", "v1"), hygiene)
    seconds = time.perf_counter() - started
    found = outcome.figures.decontamination
    held = sum(s["rows_held_back"] for s in found["eval_sets"].values()) if found else 0
    peak = peak_rss_mb() + hygiene.worker_peak_rss_mb()
    queue.put(Run(seconds, round(peak, 1), outcome.figures.records, held, hygiene.workers))


def bench_decontamination(
    directory: Path, rows: int, items: int, of: str = "sessions"
) -> dict[str, Any]:
    """The decontamination run (see the module) on ``rows`` sessions (or samples: ``of``)
    and ``items`` items."""
    from model_foundry.devtools.bench.datasets import fill

    db = directory / f"decontamination-{rows}.duckdb"
    fill_s = fill(db, rows) if of == "sessions" else fill_samples(db, rows, items)
    data = directory / "data"
    data.mkdir(exist_ok=True)
    evals = directory / "evals.jsonl"
    planted = write_eval_set(evals, rows, items)
    config = directory / "eval_sets.yaml"
    config.write_text(
        f"eval_sets:\n  bench:\n    path: {evals.name}\n    id: task_id\n"
        "    text: [prompt, canonical_solution]\n"
    )
    index = in_fresh_process(_build, str(data), str(config), timeout_s=6 * 3600)
    index_mb = sum(p.stat().st_size for p in (data / "decontamination").glob("*.npz")) / 2**20
    runs = {}
    for side, eval_sets in (("without", None), ("with", str(config))):
        out = directory / f"decontamination-{side}"
        runs[side] = in_fresh_process(
            _export if of == "sessions" else _export_samples,
            str(db), str(out), str(data), eval_sets, timeout_s=6 * 3600,
        )  # fmt: skip
    without, with_ = runs["without"], runs["with"]
    # Each planted session and the near duplicate that repeats it (``fill``: every 40th); a
    # planted sample has none.
    seeds = planted_seeds(rows, items)
    expected = sum(1 + (s + 1 < rows) for s in seeds) if of == "sessions" else len(seeds)
    return {
        "of": of,
        "rows": rows,
        "items": items,
        "fill_s": round(fill_s, 1),
        "index": {"build_s": round(index.seconds, 1), "peak_rss_mb": index.peak_rss_mb,
                  "file_mb": round(index_mb, 1)},
        "without": asdict(without),
        "with": asdict(with_),
        "time_ratio": round(with_.seconds / without.seconds, 3),
        "rss_above_mb": round(with_.peak_rss_mb - without.peak_rss_mb, 1),
        "planted_items": planted,
        "planted_rows": expected,
        "held_back": with_.held_back,
        "targets": {"time_ratio": "<= 1.5", "rss_above_mb": "<= 300"},
    }  # fmt: skip


def report_line(r: dict[str, Any]) -> str:
    return (
        f"decontamination: {r['rows']} {r['of']} against {r['items']} items (index built in "
        f"{r['index']['build_s']} s, {r['index']['file_mb']} MB): export without the check "
        f"{r['without']['seconds']:.1f} s, {r['without']['peak_rss_mb']:.0f} MB; with it "
        f"{r['with']['seconds']:.1f} s, {r['with']['peak_rss_mb']:.0f} MB; time ratio "
        f"{r['time_ratio']} (<= 1.5), RSS above {r['rss_above_mb']} MB (<= 300); held back "
        f"{r['held_back']} of {r['planted_rows']} planted rows"
    )


def main(args: Any) -> int:
    """``bench datasets``' decontamination run, in a folder of its own."""
    directory = Path(tempfile.mkdtemp(prefix="bench-decontamination-"))
    try:
        result = bench_decontamination(
            directory, args.decontamination_rows, args.eval_items, args.decontamination_of
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps({"decontamination": result}) if args.json else report_line(result))
    return 0


__all__ = [
    "bench_decontamination",
    "fill_samples",
    "main",
    "planted_seeds",
    "report_line",
    "write_eval_set",
]
