"""The tables' one home: the registry builds every table and view on an empty file, with the
columns the row dataclasses name and docs/tables.md documents (the README the inbox's two);
rows go in and come back by name."""

from __future__ import annotations

import re
import typing
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from model_foundry.lib import storage
from model_foundry.lib.inbox import arrow_rows
from model_foundry.lib.tables import registry
from model_foundry.lib.tables.splits import DATASET_SPLIT_GROUPS, SplitGroupRow
from model_foundry.lib.tables.summaries import SESSION_SUMMARY_PARTS, SummaryPartRow
from model_foundry.lib.tables.typed import CHAT_SESSIONS, ChatSessionRow
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT
TABLES_PAGE = ROOT / "docs" / "tables.md"
README = ROOT / "README.md"
# A row of a tables section: | `name` | key | columns |
README_ROW = re.compile(r"^\| `(\w+)` \| ([^|]+) \| ([^|]+) \|$")


def documented(page: Path = TABLES_PAGE) -> dict[str, tuple[str, list[str]]]:
    """Each table or view a page's tables section names: (its key cell, its columns)."""
    section = page.read_text(encoding="utf-8").split("## Tables and views", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = (README_ROW.match(line.strip()) for line in section.splitlines())
    return {
        m.group(1): (m.group(2).strip(), [c.strip() for c in m.group(3).split(",")])
        for m in rows
        if m
    }


def columns(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    return [
        n
        for (n,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "ORDER BY ordinal_position",
            [name],
        ).fetchall()
    ]


def primary_key(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    found = con.execute(
        "SELECT constraint_column_names FROM duckdb_constraints() "
        "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'",
        [name],
    ).fetchall()
    return list(found[0][0]) if found else []


@pytest.fixture
def fresh(db_path: Path) -> duckdb.DuckDBPyConnection:
    """An empty file after its first connection: what the registry made of it."""
    with storage.connect(db_path):
        pass
    con = duckdb.connect(str(db_path), read_only=True)
    yield con
    con.close()


def test_an_empty_file_gets_every_registered_table_and_view_with_the_rows_columns(
    fresh: duckdb.DuckDBPyConnection,
) -> None:
    tables = {n for (n,) in fresh.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    views = {
        n
        for (n,) in fresh.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
    }
    assert tables == set(registry.TABLE_NAMES)
    assert views == set(registry.VIEW_NAMES)
    for table in registry.TABLES:
        assert tuple(columns(fresh, table.name)) == table.columns, table.name


def test_docs_tables_documents_every_table_and_view_with_its_key_and_columns(
    fresh: duckdb.DuckDBPyConnection,
) -> None:
    docs = documented()
    assert set(docs) == {*registry.TABLE_NAMES, *registry.VIEW_NAMES}
    for name in registry.VIEW_NAMES:
        assert docs[name] == ("view", columns(fresh, name)), name
    for name in registry.TABLE_NAMES:
        key, cols = docs[name]
        assert cols == columns(fresh, name), name
        assert ([] if key == "none" else re.findall(r"\w+", key)) == primary_key(fresh, name)


def test_the_readme_rows_say_what_docs_tables_says() -> None:
    # The README shows the tables the rest are built from; each row it has is the full one.
    shown = documented(README)
    assert {"pipeline_event_inbox", "pipeline_event_dead_letter"} <= set(shown)
    full = documented()
    for name, row in shown.items():
        assert row == full[name], name


def test_every_column_the_database_fills_has_a_default_in_the_ddl() -> None:
    for table in registry.TABLES:
        filled = set(table.columns) - set(table.insert_columns)
        for name in filled:
            assert re.search(rf"\b{name}\b[^,\n]*DEFAULT", table.ddl), (table.name, name)
        fields = typing.get_type_hints(table.row)
        assert all(type(None) in typing.get_args(fields[n]) for n in filled), table.name


def test_the_inbox_writer_builds_exactly_the_tables_insert_columns() -> None:
    # The drain's columnar path names each column once; it must be the table's, in order.
    assert list(arrow_rows.INBOX_SOURCES) == list(registry.TABLES[0].insert_columns)
    assert ["stream", *arrow_rows.DEAD_SOURCES] == list(registry.TABLES[1].insert_columns)


def test_rows_go_in_by_name_and_come_back_by_name(db_path: Path) -> None:
    parts = [SummaryPartRow("s", "c", 1, i, f"r{i}", i * 3 + 1, i * 3 + 3) for i in range(3)]
    groups = [SplitGroupRow("d", f"g{i}", "train") for i in range(3)]
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    session = ChatSessionRow("c", when, when, 2, 5, 2, 3, ["m1", "m2"], [], 10, None, when)
    with storage.connect(db_path) as con:
        assert SESSION_SUMMARY_PARTS.insert(con, parts) == 3
        assert DATASET_SPLIT_GROUPS.insert(con, groups, on_conflict="nothing") == 3
        # A keyed table keeps the stored keys and adds the new one.
        again = [*groups[1:], SplitGroupRow("d", "g3", "test")]
        assert DATASET_SPLIT_GROUPS.insert(con, again, on_conflict="nothing") == 1
        with pytest.raises(duckdb.ConstraintException):
            DATASET_SPLIT_GROUPS.insert(con, groups[:1])
        assert CHAT_SESSIONS.insert(con, [session]) == 1
        read = SESSION_SUMMARY_PARTS.rows(
            con, SESSION_SUMMARY_PARTS.select_sql("level = ?") + " ORDER BY part_index", [1]
        )
        sessions = CHAT_SESSIONS.rows(con)
        con.execute(
            DATASET_SPLIT_GROUPS.insert_sql("replace"),
            DATASET_SPLIT_GROUPS.values(SplitGroupRow("d", "g0", "validation")),
        )
        replaced = DATASET_SPLIT_GROUPS.rows(
            con, DATASET_SPLIT_GROUPS.select_sql("group_id = 'g0'")
        )
    assert [(r.part_index, r.request_key, r.first_item, r.last_item) for r in read] == [
        (i, f"r{i}", i * 3 + 1, i * 3 + 3) for i in range(3)
    ]
    assert all(r.created_at is not None for r in read)  # filled by the database
    assert sessions == [session]
    assert [r.split for r in replaced] == ["validation"]
