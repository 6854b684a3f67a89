"""Every table and view of the DuckDB file, in the order they are created, and the one-time
migrations of files written by earlier versions.

``storage.connect`` applies :func:`create_all` once per process and file, so a fresh file gets
every table and view on first use and a person's ad-hoc query never finds one missing. This
module imports only the table definitions, never the code that writes them.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from dataclasses import dataclass

import duckdb

from model_foundry.lib.tables import views
from model_foundry.lib.tables.base import Table, View
from model_foundry.lib.tables.completions import LLM_COMPLETIONS
from model_foundry.lib.tables.datasets import DATASET_EXPORTS, DATASET_SAMPLES
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_DEAD_LETTER, PIPELINE_EVENT_INBOX
from model_foundry.lib.tables.sessions import (
    SESSION_FLOW,
    SESSION_ROUTING,
    SLOT_SHARE_WEEKLY,
)
from model_foundry.lib.tables.summaries import (
    SESSION_SUMMARIES,
    SESSION_SUMMARY_PARTS,
    SESSION_SUMMARY_TRANSLATIONS,
)
from model_foundry.lib.tables.throughput import SLOT_THROUGHPUT
from model_foundry.lib.tables.typed import (
    CHAT_MESSAGES,
    CHAT_SESSIONS,
    FLOW_EDGES,
    FLOW_NODES,
    SEMANTIC_SEARCHES,
    TOOL_CALLS,
)

log = logging.getLogger(__name__)

TABLES: tuple[Table, ...] = (
    PIPELINE_EVENT_INBOX,
    PIPELINE_EVENT_DEAD_LETTER,
    CHAT_MESSAGES,
    CHAT_SESSIONS,
    TOOL_CALLS,
    FLOW_NODES,
    FLOW_EDGES,
    SEMANTIC_SEARCHES,
    LLM_COMPLETIONS,
    SESSION_SUMMARIES,
    SESSION_SUMMARY_TRANSLATIONS,
    SESSION_SUMMARY_PARTS,
    SLOT_THROUGHPUT,
    DATASET_SAMPLES,
    DATASET_EXPORTS,
    SESSION_FLOW,
    SESSION_ROUTING,
)

# A view may read an earlier one (session_overview reads session_summaries_latest).
VIEWS: tuple[View, ...] = (
    views.SESSION_SUMMARIES_LATEST,
    views.SESSION_OVERVIEW,
    views.TOOL_CALL_STATS,
    views.SLOT_THROUGHPUT_LATEST,
    views.SLOT_THROUGHPUT_HOURLY,
    views.DATASET_STATS,
    SLOT_SHARE_WEEKLY,
)


@dataclass(frozen=True)
class KeylessMove:
    """A table written with a PRIMARY KEY (files from before the keyless inbox) moved to the
    keyless layout under the same name, its rows in their order (which keeps the min-max
    index useful); columns added since are NULL for the moved rows."""

    table: Table

    @property
    def name(self) -> str:
        return f"{self.table.name}: keyless layout"

    def needed(self, con: duckdb.DuckDBPyConnection) -> bool:
        row = con.execute(
            "SELECT count(*) FROM duckdb_constraints() "
            "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'",
            [self.table.name],
        ).fetchone()
        return bool(row and row[0])

    def statements(self) -> tuple[str, ...]:
        table = self.table.name
        staging = f"{table}__keyless"
        return (
            f"DROP TABLE IF EXISTS {staging}",
            self.table.ddl.replace(f"EXISTS {table} (", f"EXISTS {staging} (", 1),
            f"INSERT INTO {staging} BY NAME SELECT * FROM {table}",
            f"DROP TABLE {table}",
            f"ALTER TABLE {staging} RENAME TO {table}",
        )


MIGRATIONS: tuple[KeylessMove, ...] = (
    KeylessMove(PIPELINE_EVENT_INBOX),
    KeylessMove(PIPELINE_EVENT_DEAD_LETTER),
)

TABLE_NAMES: tuple[str, ...] = tuple(t.name for t in TABLES)
VIEW_NAMES: tuple[str, ...] = tuple(v.name for v in VIEWS)


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Run each migration the file still needs, each in its own transaction (a move that
    fails leaves the old table); returns the tables moved."""
    moved = []
    for migration in MIGRATIONS:
        if not migration.needed(con):
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for statement in migration.statements():
                con.execute(statement)
            con.execute("COMMIT")
        except BaseException:
            # The failed statement may have aborted the transaction already; its error
            # is the one to report.
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        log.warning("%s: moved to the keyless layout (once per file)", migration.table.name)
        moved.append(migration.table.name)
    return moved


def create_all(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create every missing table, migrate what an older file needs, then (re)create the
    views, which may read the migrated tables; returns the tables moved."""
    for table in TABLES:
        for statement in table.statements:
            con.execute(statement)
    moved = migrate(con)
    for view in VIEWS:
        con.execute(view.ddl)
    return moved


__all__ = [
    "MIGRATIONS",
    "TABLES",
    "TABLE_NAMES",
    "VIEWS",
    "VIEW_NAMES",
    "KeylessMove",
    "create_all",
    "migrate",
]
