"""The command line as a user runs it: a real process, a real nats-server, a real DuckDB file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.ports import free_port


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, **(env or {})),
    )


def test_nats_setup_is_idempotent(nats_server: LocalNatsServer, nats_env: None) -> None:
    first = cli("nats", "setup")
    assert first.returncode == 0, first.stderr
    assert "created stream PIPELINE_EVENTS" in first.stdout
    assert first.stdout.count("created consumer") == 4
    second = cli("nats", "setup")
    assert second.returncode == 0 and "already exist" in second.stdout


def test_unreachable_nats_is_one_line_without_traceback() -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    result = cli("nats", "setup", env={"NATS_URL": url})
    assert result.returncode == 1
    assert url in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


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


HOLD_WRITE_LOCK = textwrap.dedent(
    """
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("CREATE TABLE IF NOT EXISTS t AS SELECT 42 AS answer")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    con.close()
    """
)


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


def test_query_on_a_missing_file_says_what_to_do(tmp_path: Path) -> None:
    result = cli("query", "SELECT 1", env={"MODEL_FOUNDRY_DUCKDB": str(tmp_path / "none.duckdb")})
    assert result.returncode == 1
    assert "no DuckDB file" in result.stderr and "Traceback" not in result.stderr


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


def test_bad_sql_is_duckdbs_sentence_and_query_stays_read_only(tmp_path: Path) -> None:
    db = tmp_path / "q.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS i")
    env = {"MODEL_FOUNDRY_DUCKDB": str(db)}
    typo = cli("query", "SELEC i FROM t", env=env)
    assert typo.returncode == 1
    assert "Traceback" not in typo.stderr
    assert len(typo.stderr.strip().splitlines()) == 1
    assert "syntax error" in typo.stderr.lower()
    write = cli("query", "INSERT INTO t VALUES (2)", env=env)
    assert write.returncode == 1 and "Traceback" not in write.stderr
    assert "read-only" in write.stderr.lower()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
    ok = cli("query", "SELECT i FROM t", env=env)
    assert ok.returncode == 0 and _cells(ok.stdout) == [["i"], ["int32"], ["1"]]


def _cells(box: str) -> list[list[str]]:
    """The header, type and value rows of DuckDB's drawn table, cell by cell."""
    return [
        [cell.strip() for cell in line.strip().strip("│").split("│")]
        for line in box.splitlines()
        if line.startswith("│")
    ]


def test_query_shows_null_and_the_column_types_as_duckdb_draws_them(tmp_path: Path) -> None:
    db = tmp_path / "q.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(
            "CREATE TABLE t AS SELECT i, CASE WHEN i % 2 = 1 THEN 'odd' END AS label, "
            "i / 2 AS half, '{\"k\": 1}'::JSON AS doc FROM range(4) r(i)"
        )
    env = {"MODEL_FOUNDRY_DUCKDB": str(db)}
    result = cli("query", "SELECT * FROM t ORDER BY i", env=env)
    assert result.returncode == 0, result.stderr
    assert "NaN" not in result.stdout and "None" not in result.stdout
    header, types, *rows = _cells(result.stdout)
    assert header == ["i", "label", "half", "doc"]
    assert types == ["int64", "varchar", "double", "json"]
    assert [row[1] for row in rows] == ["NULL", "odd", "NULL", "odd"]
    assert rows[2] == ["2", "NULL", "1.0", '{"k": 1}']

    many = cli("query", "SELECT i FROM range(1000) r(i)", "--max-rows", "6", env=env)
    assert many.returncode == 0, many.stderr
    values = [row[0] for row in _cells(many.stdout)[2:] if row[0] != "·"]
    assert values == ["0", "1", "2", "997", "998", "999"]
    # The footer counts every row; DuckDB wraps it to the table's width.
    footer = " ".join(many.stdout.rsplit("┘", 1)[1].split())
    assert footer == "1000 rows (6 shown)", many.stdout


def test_dataset_names_that_would_leave_the_export_folder_are_refused(tmp_path: Path) -> None:
    env = {"MODEL_FOUNDRY_DATA_DIR": str(tmp_path / "data")}
    for flag, value in [
        ("--name", "../../escape"),
        ("--name", str(tmp_path / "absolute")),
        ("--version", "../v1"),
        ("--name", ".hidden"),
    ]:
        result = cli("dataset", "collect", flag, value, "--no-chat-sessions", env=env)
        assert result.returncode == 1, (flag, value, result.stdout)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "is not allowed" in result.stderr
    assert not (tmp_path / "escape").exists() and not (tmp_path / "absolute").exists()
    assert not (tmp_path / "data" / "datasets").exists()


def test_product_code_never_imports_the_dev_tools() -> None:
    # defs/ and lib/ must work where the simulator, benchmarks and local NATS are not wanted.
    code = textwrap.dedent(
        """
        import pkgutil, sys, importlib
        import model_foundry.definitions, model_foundry.defs, model_foundry.lib
        for pkg in (model_foundry.defs, model_foundry.lib):
            for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
                importlib.import_module(mod.name)
        print(sorted(m for m in sys.modules if m.startswith("model_foundry.devtools")))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_demo_keeps_to_its_own_data_and_prints_how_to_query_it(
    tmp_path: Path, nats_server: LocalNatsServer
) -> None:
    from model_foundry.lib.nats.connection import NatsClient
    from model_foundry.lib.publish import make_event
    from model_foundry_tests.nats_helpers import publish

    data = tmp_path / "data"
    data.mkdir()
    users_db = data / "model_foundry.duckdb"
    with duckdb.connect(str(users_db)) as con:
        con.execute("CREATE TABLE mine AS SELECT 42 AS answer")
    before = users_db.read_bytes()
    # A user's own NATS with a real event waiting: the demo must not drain it.
    users_nats = NatsClient(servers=nats_server.url)
    users_nats.setup()
    publish(users_nats, [make_event("llm.tool_call", {"tool": "t", "arguments": {}}, "s1")])

    result = cli(
        "demo",
        "--events",
        "40",
        env={"MODEL_FOUNDRY_DATA_DIR": str(data), "NATS_URL": nats_server.url},
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert users_db.read_bytes() == before
    assert users_nats.pending_for("llm.tool_call").num_pending == 1

    command = result.stdout.strip().splitlines()[-1].strip()
    assert command.startswith("MODEL_FOUNDRY_DUCKDB=") and " model-foundry query " in command
    demo_db = command.split()[0].split("=", 1)[1]
    assert Path(demo_db).is_relative_to(data / "demo")
    summary = cli(
        "query", "SELECT count(*) AS n FROM session_overview", env={"MODEL_FOUNDRY_DUCKDB": demo_db}
    )
    assert summary.returncode == 0, summary.stderr
