"""``storage.held``: the writes and reads of a few steps in a row on one open of the DuckDB
file, each still its own committed transaction, and the file let go when the block ends."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import duckdb

from model_foundry.lib import storage


def _insert(value: int) -> Callable[[duckdb.DuckDBPyConnection], None]:
    def work(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("CREATE TABLE IF NOT EXISTS t (a INTEGER)")
        con.execute("INSERT INTO t VALUES (?)", [value])

    return work


def test_connects_inside_held_share_one_connection_and_still_commit(tmp_path: Path) -> None:
    db = tmp_path / "held.duckdb"
    with storage.held(db):
        with storage.connect(db) as first, storage.connect(db, read_only=True) as second:
            assert first is second
        storage.run_in_transaction(db, _insert(1))
        storage.run_in_transaction(db, _insert(2))
        with storage.held(db), storage.connect(db) as inner:  # nested: the same one
            assert inner is first
        seen_elsewhere: list[int] = []

        def other_thread() -> None:
            # Another thread opens its own connection and sees both commits.
            with storage.connect(db, read_only=False) as con:
                assert con is not first
                seen_elsewhere.extend(r[0] for r in con.execute("SELECT a FROM t").fetchall())

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert sorted(seen_elsewhere) == [1, 2]
    with storage.connect(db) as after:
        assert after is not first
        assert sorted(r[0] for r in after.execute("SELECT a FROM t").fetchall()) == [1, 2]


def _other_process_reads(db: Path) -> str:
    """What another process gets opening ``db``: its rows of ``t``, or ``locked``."""
    code = (
        "import duckdb, sys\n"
        "try:\n"
        f"    con = duckdb.connect({str(db)!r})\n"
        "except duckdb.Error as exc:\n"
        "    print('locked' if 'lock' in str(exc) else exc); sys.exit(0)\n"
        "print(sorted(r[0] for r in con.execute('SELECT a FROM t').fetchall()))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


def test_held_keeps_other_processes_out_and_lets_the_file_go_when_it_ends(tmp_path: Path) -> None:
    db = tmp_path / "held.duckdb"
    with storage.held(db):
        storage.run_in_transaction(db, _insert(1))
        # The registry's tables and views are there and readable on the held connection.
        with storage.connect(db) as con:
            assert con.execute("SELECT count(*) FROM llm_completions").fetchone() == (0,)
        assert _other_process_reads(db) == "locked"
    assert _other_process_reads(db) == "[1]"
    # Held again after another process had it: the rows it left, and the block's own.
    with storage.held(db):
        storage.run_in_transaction(db, _insert(2))
    assert _other_process_reads(db) == "[1, 2]"


def test_held_shares_a_connection_this_process_already_has_open(tmp_path: Path) -> None:
    db = tmp_path / "held.duckdb"
    with storage.connect(db) as plain:
        plain.execute("CREATE TABLE t (a INTEGER)")
        # DuckDB refuses a second open of one file in a process; held takes the open one.
        with storage.held(db):
            storage.run_in_transaction(db, _insert(3))
        assert plain.execute("SELECT a FROM t").fetchall() == [(3,)]


def test_a_batch_writer_inside_held_leaves_the_shared_settings_alone(tmp_path: Path) -> None:
    db = tmp_path / "held.duckdb"
    with storage.held(db), storage.connect(db) as con:
        before = con.execute("SELECT current_setting('memory_limit')").fetchone()
        with storage.BatchWriter(db, memory_limit="64MB", threads=1) as writer:
            writer.write(_insert(4))
        after = con.execute("SELECT current_setting('memory_limit')").fetchone()
        assert after == before
        assert con.execute("SELECT a FROM t").fetchall() == [(4,)]
