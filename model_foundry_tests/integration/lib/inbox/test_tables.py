"""The typed tables fed by commit position: numbers in commit order, exactly once across a: the
integration tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib.inbox import commit_spans
from model_foundry.lib.inbox.typed import refresh_inbox_tables
from model_foundry_tests.shared.lib.inbox.tables import (
    _KILLED,
    ROOT,
    rebuilt_copy,
    snapshot,
)

# Every column but refreshed_at (the time of the merge), in a stable order.


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
