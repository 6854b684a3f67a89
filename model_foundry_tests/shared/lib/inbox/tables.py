"""The typed tables fed by commit position: numbers in commit order, exactly once across a
kill, a rebuild equal to the incremental path, old keyed files migrated with every row, and a
refresh beside a big inbox under a small memory limit.

What the unit, integration and system tests of ``lib/inbox/test_tables.py`` share."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib.inbox.typed import TYPED_TABLES, refresh_inbox_tables
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT


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


_OLD_TYPED = {
    "chat_messages": "PRIMARY KEY (event_id, message_index)",
    "chat_sessions": "PRIMARY KEY (correlation_id)",
    "tool_calls": "PRIMARY KEY (event_id)",
    "flow_nodes": "PRIMARY KEY (event_id)",
    "flow_edges": "PRIMARY KEY (event_id)",
    "semantic_searches": "PRIMARY KEY (event_id)",
}
