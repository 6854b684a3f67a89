"""The typed tables fed by commit position: numbers in commit order, exactly once across a
kill, a rebuild equal to the incremental path, old keyed files migrated with every row, and a
refresh beside a big inbox under a small memory limit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pytest

from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib.inbox import commit_spans
from model_foundry.lib.inbox.typed import TYPED_TABLES, refresh_inbox_tables
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT

# Every column but refreshed_at (the time of the merge), in a stable order.
_ORDER = {
    "chat_messages": "event_id, message_index",
    "chat_sessions": "correlation_id",
}


def snapshot(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        out = {}
        for table in TYPED_TABLES:
            cols = [
                c
                for (c,) in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                    "AND column_name <> 'refreshed_at' ORDER BY ordinal_position",
                    [table],
                ).fetchall()
            ]
            order = _ORDER.get(table, "event_id")
            out[table] = con.execute(
                f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}"
            ).fetchall()
        return out


def rebuilt_copy(db: Path, tmp_path: Path) -> dict[str, list[tuple[Any, ...]]]:
    copy = tmp_path / "rebuilt.duckdb"
    shutil.copy(db, copy)
    refresh_inbox_tables(copy, rebuild=True)
    return snapshot(copy)


_KILLED = """
import os, sys
from model_foundry.lib import storage
from model_foundry.lib.inbox import commit_spans, typed

where = sys.argv[2]
if where == "before_position":
    # The rows are written, the position is not: the process dies inside the transaction.
    commit_spans.advance = lambda con, span: os._exit(7)
else:
    write = storage.BatchWriter.write
    def committed_then_killed(self, work):
        write(self, work)
        os._exit(7)
    storage.BatchWriter.write = committed_then_killed
typed.refresh_inbox_tables(sys.argv[1])
"""


def refresh_killed(db: Path, where: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED), str(db), where],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 7, done.stderr


def test_a_refresh_killed_before_or_after_its_commit_neither_skips_nor_repeats(
    db_path: Path, tmp_path: Path
) -> None:
    fill_mix(db_path, 0, 3000)
    refresh_inbox_tables(db_path)
    fill_mix(db_path, 3000, 4000)
    before = snapshot(db_path)

    refresh_killed(db_path, "before_position")
    assert snapshot(db_path) == before  # nothing of the killed run stayed
    with duckdb.connect(str(db_path), read_only=True) as con:
        assert commit_spans.position(con, "inbox_tables") == 1

    refresh_killed(db_path, "after_commit")
    after = snapshot(db_path)
    assert len(after["chat_messages"]) == len(before["chat_messages"]) + 600 * 3
    again = refresh_inbox_tables(db_path)  # the rerun finds nothing new
    assert sum(again.added.values()) == 0
    assert snapshot(db_path) == after == rebuilt_copy(db_path, tmp_path)


_OLD_TYPED = {
    "chat_messages": "PRIMARY KEY (event_id, message_index)",
    "chat_sessions": "PRIMARY KEY (correlation_id)",
    "tool_calls": "PRIMARY KEY (event_id)",
    "flow_nodes": "PRIMARY KEY (event_id)",
    "flow_edges": "PRIMARY KEY (event_id)",
    "semantic_searches": "PRIMARY KEY (event_id)",
}


def test_a_refresh_beside_two_million_rows_fits_in_256_mb(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill_mix(db_path, 0, 2_000_000)
    refresh_inbox_tables(db_path)
    fill_mix(db_path, 2_000_000, 2_001_000)
    monkeypatch.setenv("MODEL_FOUNDRY_DOWNSTREAM_MEMORY_LIMIT", "256MB")
    result = refresh_inbox_tables(db_path)
    assert result.added["chat_messages"] == 600 * 3
    assert result.added["tool_calls"] == 200
    with duckdb.connect(str(db_path), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM chat_messages").fetchone() == (
            (2_001_000 // 20) * 12 * 3,
        )
