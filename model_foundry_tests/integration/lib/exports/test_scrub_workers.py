"""Scrubbing in worker processes: the same records and files as scrubbing in the export's own
process, from real spawned workers."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from model_foundry.devtools.bench import datasets as bench
from model_foundry.lib.exports.hygiene import ExportHygiene, scrub_session_record
from model_foundry.lib.exports.workers import THEN, ScrubPool
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.storage import connect
from model_foundry.lib.trajectories.export import SessionExport, export_session_dataset
from model_foundry.lib.trajectories.sessions import SessionWindow, export_sessions, session_records

pytestmark = pytest.mark.timeout(600)


def _records(db: Path) -> list[dict]:
    with connect(db) as con:
        sessions = export_sessions(con, SessionWindow(include_active=True))
    return list(session_records(str(db), sessions))


def test_workers_give_every_record_as_the_parent_would(tmp_path: Path) -> None:
    db = tmp_path / "sessions.duckdb"
    bench.fill(db, 600)
    records = _records(db)
    scrubber = RecordScrubber(salt=b"workers")
    alone = list(ScrubPool(scrubber, scrub_session_record, workers=0).scrub_all(records))
    pool = ScrubPool(scrubber, scrub_session_record, workers=2, pool_from=10)
    pooled = list(pool.scrub_all(records))
    assert len(pool.peak_rss_mb) == 2, "both workers scrubbed"
    assert [c for c, _ in pooled] == [c for c, _ in alone]
    assert [dict(n) for _, n in pooled] == [dict(n) for _, n in alone]
    # The bench plants secrets in these sessions: the scrub found them.
    assert sum(sum(n.values()) for _, n in alone) > 0


def _digest(folder: Path) -> dict[str, str]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".parquet":
            rows = pq.read_table(path).to_pylist()
            out[str(path.relative_to(folder))] = hashlib.sha256(
                json.dumps(rows, default=str, sort_keys=True).encode()
            ).hexdigest()
        elif path.suffix == ".jsonl":
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def test_an_export_scrubbed_in_workers_writes_the_same_files(tmp_path: Path) -> None:
    db = tmp_path / "sessions.duckdb"
    bench.fill(db, 1200)
    folders = []
    for workers in (0, 2):
        out_root = tmp_path / f"out-{workers}"
        hygiene = ExportHygiene(db, "bench", RecordScrubber(salt=b"same"), 0.1, workers)

        def factory(path: Path, dataset: str, share: float, hygiene=hygiene) -> ExportHygiene:
            return hygiene

        request = SessionExport(name="bench", out_root=out_root, version="v1", include_active=True)
        outcome = export_session_dataset(str(db), request, factory)
        assert outcome.figures.records > 0
        assert bool(hygiene.pools and hygiene.pools[0].peak_rss_mb) == (workers > 0)
        folders.append(out_root / "bench" / "v1")
    digests = [_digest(f) for f in folders]
    assert digests[0] and digests[0] == digests[1]


def _dies_in_a_worker(scrubber: RecordScrubber, record: dict) -> tuple[dict, dict]:
    if str(os.getpid()) != os.environ["MF_TEST_PARENT_PID"]:
        os._exit(3)  # a worker killed mid-chunk (out of memory, a signal)
    return scrub_session_record(scrubber, record)


def test_a_dead_worker_s_records_are_scrubbed_in_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MF_TEST_PARENT_PID", str(os.getpid()))
    db = tmp_path / "sessions.duckdb"
    bench.fill(db, 300)
    records = _records(db)
    scrubber = RecordScrubber(salt=b"workers")
    alone = list(ScrubPool(scrubber, scrub_session_record, workers=0).scrub_all(records))
    pool = ScrubPool(scrubber, _dies_in_a_worker, workers=2, pool_from=10)
    pooled = list(pool.scrub_all(records))
    assert not pool.peak_rss_mb, "no worker finished a chunk"
    assert [c for c, _ in pooled] == [c for c, _ in alone]


def _answer_length(record: dict) -> int:
    """A stand-in for the gates: any picklable function of the scrubbed record."""
    return sum(len(m.get("content") or "") for m in record["messages"])


def test_what_runs_after_the_scrub_in_workers_is_what_the_parent_works_out(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.duckdb"
    bench.fill(db, 300)
    records = _records(db)
    scrubber = RecordScrubber(salt=b"then")
    pool = ScrubPool(scrubber, scrub_session_record, workers=2, pool_from=10)
    pooled = list(pool.scrub_all(records, _answer_length))
    assert len(pool.peak_rss_mb) == 2, "both workers scrubbed"
    alone = list(ScrubPool(scrubber, scrub_session_record, workers=0).scrub_all(records))
    # Worked out on the scrubbed record (markers counted), as the parent would.
    assert [c.pop(THEN) for c, _ in pooled] == [_answer_length(c) for c, _ in alone]
    assert [c for c, _ in pooled] == [c for c, _ in alone]
