"""``storage.held``: the writes and reads of a few steps in a row on one open of the DuckDB
file, each still its own committed transaction, and the file let go when the block ends."""

from __future__ import annotations

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
