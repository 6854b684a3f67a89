"""The command line as a user runs it: a real process, a real nats-server, a real DuckDB file:
the system tests."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry_tests.shared.cli.cli import (
    HOLD_WRITE_LOCK,
    _cells,
    cli,
)


def test_nats_setup_is_idempotent(nats_server: LocalNatsServer, nats_env: None) -> None:
    first = cli("nats", "setup")
    assert first.returncode == 0, first.stderr
    assert "created stream PIPELINE_EVENTS" in first.stdout
    assert first.stdout.count("created consumer") == 4
    second = cli("nats", "setup")
    assert second.returncode == 0 and "already exist" in second.stdout


def test_publish_samples_and_jsonl_then_drain_and_query(
    nats_server: LocalNatsServer, nats_env: None, db_path: Path, tmp_path: Path
) -> None:
    published = cli("publish", "--sample", "40", "--sessions", "3")
    assert published.returncode == 0, published.stderr
    assert "published 40 events" in published.stdout

    jsonl = tmp_path / "events.jsonl"
    lines = [
        {
            "event_id": "file-1",
            "correlation_id": "s9",
            "subject": "llm.tool_call",
            "payload": {"tool": "grep", "arguments": {"q": "x"}},
        },
        {
            "event_id": "file-2",
            "correlation_id": "s9",
            "subject": "knowledge.embedding",
            "payload": {"query": "翻訳"},
        },
    ]
    jsonl.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n")
    from_file = cli("publish", "--file", str(jsonl))
    assert from_file.returncode == 0, from_file.stderr

    drained = cli("drain")
    assert drained.returncode == 0, drained.stderr

    with duckdb.connect(str(db_path), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM pipeline_event_inbox").fetchone()[0] == 42
        assert (
            con.execute(
                "SELECT count(DISTINCT correlation_id) FROM pipeline_event_inbox"
            ).fetchone()[0]
            == 4
        )
        assert (
            con.execute(
                "SELECT subject FROM pipeline_event_inbox WHERE event_id = 'file-2'"
            ).fetchone()[0]
            == "obsidian.semantic_search"
        )

    queried = cli(
        "query", "SELECT subject, count(*) AS n FROM pipeline_event_inbox GROUP BY 1 ORDER BY 1"
    )
    assert queried.returncode == 0, queried.stderr
    header, types, *rows = _cells(queried.stdout)
    assert header == ["subject", "n"] and types == ["varchar", "int64"]
    assert len(rows) == 4 and rows[0][0] == "llm.chat.persist", queried.stdout


def test_query_waits_for_a_writer_instead_of_showing_a_lock_error(
    db_path: Path, tmp_path: Path
) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "hold.py"
    script.write_text(HOLD_WRITE_LOCK)
    holder = subprocess.Popen(
        [sys.executable, str(script), str(db_path), "2.0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        result = cli("query", "SELECT answer FROM t", env={"MODEL_FOUNDRY_DUCKDB": str(db_path)})
        waited = time.monotonic() - started
    finally:
        holder.wait(timeout=30)
    assert result.returncode == 0, result.stderr
    assert "42" in result.stdout
    assert "lock" not in result.stderr.lower()
    # It really had to wait for the writer (a sanity check on the setup, not a speed limit).
    assert waited > 0.5


def test_bench_ingest_reports_every_field_and_loses_nothing() -> None:
    result = cli("bench", "ingest", "--events", "400", "--batch-size", "100", "--json", timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for key in (
        "events",
        "seconds",
        "events_per_s",
        "raw_events_per_s",
        "ratio",
        "inserted",
        "duplicates",
        "lost",
        "peak_rss_mb",
    ):
        assert key in report
    assert report["events"] == 400 and report["inserted"] == 400
    assert report["lost"] == 0 and report["duplicates"] == 0
    assert report["raw_events_per_s"] > 0 and report["ratio"] > 0


def test_bench_ingest_into_a_prefilled_inbox_counts_only_the_timed_events() -> None:
    result = cli(
        "bench", "ingest", "--events", "200", "--batch-size", "100", "--prefill", "5000",
        "--repeat", "1", "--json", timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    # Each round drains into a copy of the prefilled file (flushed to disk before the timed
    # part): the 5000 rows are there, and only the 200 published events are new.
    assert report["prefill"] == 5000 and report["inserted"] == 200
    assert report["lost"] == 0 and report["duplicates"] == 0


# Beyond the CLI call's own 480 s: a run cut by pytest-timeout would leave the daemon behind.
@pytest.mark.timeout(600)
def test_bench_e2e_runs_the_daemon_and_loses_nothing() -> None:
    # A smoke run of the whole benchmark: nats-server, simulator, dagster-daemon, sensors.
    result = cli("bench", "e2e", "--rate", "20", "--seconds", "3", "--json", timeout=480)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["events"] == 60 and report["stored"] == 60 and report["lost"] == 0
    assert report["runs"] >= 1
    assert report["ceiling_events_per_s"] > 0
    assert 0 <= report["delay_p50_s"] <= report["delay_p95_s"] <= report["delay_max_s"]
    # Downstream freshness: every chat event (a quarter of them) reached a summary row.
    assert report["chat_events"] == 15 and report["unsummarised"] == 0
    assert report["downstream_runs"] >= 1
    summary = [report[f"summary_delay_{q}_s"] for q in ("p50", "p95", "max")]
    assert 0 < summary[0] <= summary[1] <= summary[2]
