"""The typed tables fed by commit position: numbers in commit order, exactly once across a: the
unit tests."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib import storage
from model_foundry.lib.inbox import commit_spans
from model_foundry.lib.inbox.counts import read_counts
from model_foundry.lib.inbox.dedupe_window import merged_ranges
from model_foundry.lib.inbox.typed import TYPED_TABLES, refresh_inbox_tables
from model_foundry_tests.shared.lib.inbox.tables import (
    _OLD_TYPED,
    rebuilt_copy,
    snapshot,
)

# Every column but refreshed_at (the time of the merge), in a stable order.


def test_commit_numbers_follow_commit_order_and_a_snapshot_sees_a_prefix(db_path: Path) -> None:
    fill_mix(db_path, 0, 20)
    second_batch = "INSERT INTO pipeline_event_inbox BY NAME SELECT * REPLACE (2 AS commit_seq) "
    second_batch += "FROM pipeline_event_inbox"
    with duckdb.connect(str(db_path)) as db:
        first, second, reader = db.cursor(), db.cursor(), db.cursor()
        first.execute("BEGIN TRANSACTION")
        assert commit_spans.next_commit_seq(first) == 2
        first.execute(second_batch)
        second.execute("BEGIN TRANSACTION")
        # The second writer cannot take a number while the first one's is open ...
        with pytest.raises(duckdb.TransactionException, match="onflict"):
            commit_spans.next_commit_seq(second)
        second.execute("ROLLBACK")
        reader.execute("BEGIN TRANSACTION")
        assert commit_spans.last_commit_seq(reader) == 1  # the reader's snapshot starts here
        first.execute("COMMIT")
        # ... and after it committed, it gets the next one.
        second.execute("BEGIN TRANSACTION")
        assert commit_spans.next_commit_seq(second) == 3
        # The snapshot taken before the commit sees neither, one taken now sees the first.
        assert commit_spans.last_commit_seq(reader) == 1
        assert reader.execute("SELECT max(commit_seq) FROM pipeline_event_inbox").fetchone() == (1,)
        reader.execute("COMMIT")
        assert commit_spans.last_commit_seq(reader) == 2
        second.execute("ROLLBACK")
        assert commit_spans.last_commit_seq(reader) == 2


def test_time_ranges_merge_when_they_overlap_and_at_most_the_given_number_stay() -> None:
    ranges = [(10, 20), (15, 30), (40, 50), (52, 60), (100, 110)]
    assert merged_ranges(ranges, most=16) == [(10, 30), (40, 50), (52, 60), (100, 110)]
    assert merged_ranges(ranges, most=2) == [(10, 60), (100, 110)]


def test_rounds_of_incremental_refreshes_equal_one_rebuild(db_path: Path, tmp_path: Path) -> None:
    for low, high in ((0, 700), (700, 1500), (1500, 1501), (1501, 2600)):
        fill_mix(db_path, low, high)
        result = refresh_inbox_tables(db_path)
        assert result.added["chat_messages"] > 0
    # A second copy of an event within the window, committed later, is not added again.
    with storage.connect(db_path) as con:
        con.execute("BEGIN TRANSACTION")
        seq = commit_spans.next_commit_seq(con)
        con.execute(
            "INSERT INTO pipeline_event_inbox BY NAME SELECT * REPLACE (? AS commit_seq) "
            "FROM pipeline_event_inbox WHERE stream_seq IN (1, 13, 17, 20)",
            [seq],
        )
        con.execute("COMMIT")
    assert sum(refresh_inbox_tables(db_path).added.values()) == 0
    incremental = snapshot(db_path)
    assert incremental == rebuilt_copy(db_path, tmp_path)
    sessions = {r[0]: r for r in incremental["chat_sessions"]}
    # Session bench-0 is events 0..299: 180 chat events of 3 messages.
    assert sessions["bench-0"][3:7] == (180, 540, 360, 180)


def make_old_keyed_file(db: Path) -> None:
    """A file as the version before positions left it: keyed typed tables and an inbox
    without commit_seq, whose last events the typed tables do not hold yet."""
    fill_mix(db, 0, 2000)
    refresh_inbox_tables(db)
    fill_mix(db, 2000, 2500)
    with duckdb.connect(str(db)) as con:
        for table, key in _OLD_TYPED.items():
            sql = con.execute(
                "SELECT sql FROM duckdb_tables() WHERE table_name = ?", [table]
            ).fetchone()[0]
            con.execute(f"ALTER TABLE {table} RENAME TO {table}_rows")
            con.execute(sql.rstrip(");").rstrip() + f", {key});")
            con.execute(f"INSERT INTO {table} SELECT * FROM {table}_rows")
            con.execute(f"DROP TABLE {table}_rows")
        con.execute("ALTER TABLE pipeline_event_inbox DROP COLUMN commit_seq")
        con.execute("DROP TABLE pipeline_event_inbox_commits")
        con.execute("DROP TABLE downstream_positions")


def test_an_old_keyed_file_migrates_once_keeps_every_row_and_catches_up(
    db_path: Path, tmp_path: Path
) -> None:
    make_old_keyed_file(db_path)
    old = snapshot(db_path)
    storage._schema_ready.clear()  # a new process, as far as the registry knows
    with storage.connect(db_path) as con:
        keys = con.execute(
            "SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' "
            f"AND table_name IN ({', '.join('?' * len(TYPED_TABLES))})",
            list(TYPED_TABLES),
        ).fetchone()
        assert keys == (0,)
        assert con.execute(
            "SELECT count(*), min(commit_seq), max(commit_seq) FROM pipeline_event_inbox"
        ).fetchone() == (2500, 0, 0)
    migrated = snapshot(db_path)
    assert migrated == old  # every row kept
    caught_up = refresh_inbox_tables(db_path)
    assert caught_up.added["chat_messages"] == 300 * 3  # only the 300 chat events it lacked
    now = snapshot(db_path)
    for table in TYPED_TABLES:
        if table == "chat_sessions":  # merged with the new messages: the sessions stay
            assert {r[0] for r in old[table]} <= {r[0] for r in now[table]}
        else:
            assert set(old[table]) <= set(now[table]), table
    assert now == rebuilt_copy(db_path, tmp_path)


def test_the_exporters_counts_are_exact_before_and_after_a_refresh(db_path: Path) -> None:
    def counted() -> dict[str, tuple[int, float | None]]:
        with duckdb.connect(str(db_path), read_only=True) as con:
            return {c.subject: (c.events, c.newest_at) for c in read_counts(con)}

    def full() -> dict[str, tuple[int, float | None]]:
        with duckdb.connect(str(db_path), read_only=True) as con:
            rows = con.execute(
                "SELECT subject, count(*), epoch(max(occurred_at)) FROM pipeline_event_inbox "
                "GROUP BY subject"
            ).fetchall()
        return {s: (n, t) for s, n, t in rows}

    with storage.connect(db_path):
        pass
    assert counted() == {}
    fill_mix(db_path, 0, 900)
    assert counted() == full()  # all of it after the (absent) position
    refresh_inbox_tables(db_path)
    fill_mix(db_path, 900, 1000)
    assert counted() == full()  # kept counts plus the newest commit
    refresh_inbox_tables(db_path)
    assert (
        counted()
        == full()
        == {
            "llm.chat.persist": (600, full()["llm.chat.persist"][1]),
            "llm.tool_call": (200, full()["llm.tool_call"][1]),
            "llm.flow.lineage": (150, full()["llm.flow.lineage"][1]),
            "obsidian.semantic_search": (50, full()["obsidian.semantic_search"][1]),
        }
    )
    refresh_inbox_tables(db_path, rebuild=True)
    assert counted() == full()
