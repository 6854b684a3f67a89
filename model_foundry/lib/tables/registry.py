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
from model_foundry.lib.tables.base import Table, View, has_column
from model_foundry.lib.tables.completions import KEY_PREFIX_SQL, LLM_COMPLETIONS
from model_foundry.lib.tables.datasets import DATASET_EXPORTS, DATASET_SAMPLES
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_DEAD_LETTER, PIPELINE_EVENT_INBOX
from model_foundry.lib.tables.judgements import DATASET_JUDGEMENTS, MODEL_PREFERENCES
from model_foundry.lib.tables.positions import (
    DOWNSTREAM_POSITIONS,
    PIPELINE_EVENT_INBOX_COMMITS,
    PIPELINE_EVENT_INBOX_COUNTS,
    SEED_INBOX_COMMITS,
)
from model_foundry.lib.tables.recipes import (
    DATASET_RECIPE_CELLS,
    DATASET_RECIPE_ROWS,
    DATASET_RECIPE_SEED_MARKS,
)
from model_foundry.lib.tables.sessions import (
    SESSION_FLOW,
    SESSION_ROUTING,
    SLOT_SHARE_WEEKLY,
)
from model_foundry.lib.tables.splits import DATASET_SPLIT_GROUPS
from model_foundry.lib.tables.summaries import (
    SEED_SUMMARY_QUEUE,
    SEED_TRANSLATION_QUEUE,
    SESSION_SUMMARIES,
    SESSION_SUMMARY_PARTS,
    SESSION_SUMMARY_QUEUE,
    SESSION_SUMMARY_TRANSLATION_QUEUE,
    SESSION_SUMMARY_TRANSLATIONS,
    SUMMARY_QUEUE_STEP,
    TRANSLATION_QUEUE_STEP,
    queue_seeded,
)
from model_foundry.lib.tables.throughput import SLOT_THROUGHPUT
from model_foundry.lib.tables.trajectories import SESSION_TRAJECTORIES, SESSION_TURNS
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
    PIPELINE_EVENT_INBOX_COMMITS,
    PIPELINE_EVENT_INBOX_COUNTS,
    DOWNSTREAM_POSITIONS,
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
    SESSION_SUMMARY_QUEUE,
    SESSION_SUMMARY_TRANSLATION_QUEUE,
    SLOT_THROUGHPUT,
    DATASET_SAMPLES,
    DATASET_EXPORTS,
    DATASET_SPLIT_GROUPS,
    DATASET_JUDGEMENTS,
    SESSION_FLOW,
    SESSION_ROUTING,
    SESSION_TURNS,
    SESSION_TRAJECTORIES,
    DATASET_RECIPE_CELLS,
    DATASET_RECIPE_SEED_MARKS,
)

# A view may read an earlier one (session_overview reads session_summaries_latest).
VIEWS: tuple[View, ...] = (
    views.SESSION_SUMMARIES_LATEST,
    views.SESSION_OVERVIEW,
    views.TOOL_CALL_STATS,
    views.SLOT_THROUGHPUT_LATEST,
    views.SLOT_THROUGHPUT_HOURLY,
    views.SLOT_PREFILL,
    views.DATASET_STATS,
    MODEL_PREFERENCES,
    SLOT_SHARE_WEEKLY,
    DATASET_RECIPE_ROWS,
)


@dataclass(frozen=True)
class AddCommitSeq:
    """The inbox of a file from before commit positions gets ``commit_seq`` 0 on every row
    (what the downstream steps read first), then NOT NULL without a default, so a row
    inserted without its commit's number fails instead of being missed downstream."""

    table: Table = PIPELINE_EVENT_INBOX
    name: str = "pipeline_event_inbox: commit_seq"

    def needed(self, con: duckdb.DuckDBPyConnection) -> bool:
        return not has_column(con, self.table.name, "commit_seq")

    def statements(self) -> tuple[str, ...]:
        table = self.table.name
        return (
            f"ALTER TABLE {table} ADD COLUMN commit_seq BIGINT DEFAULT 0",
            f"ALTER TABLE {table} ALTER COLUMN commit_seq DROP DEFAULT",
            f"ALTER TABLE {table} ALTER COLUMN commit_seq SET NOT NULL",
        )


@dataclass(frozen=True)
class AddColumn:
    """A nullable column a file from before it lacks, added in place: the rows it already has
    read NULL there (nothing was measured for them), and no row is copied."""

    table: Table
    column: str
    type: str

    @property
    def name(self) -> str:
        return f"{self.table.name}: {self.column}"

    def needed(self, con: duckdb.DuckDBPyConnection) -> bool:
        return not has_column(con, self.table.name, self.column)

    def statements(self) -> tuple[str, ...]:
        if self.column not in self.table.columns:
            raise ValueError(f"{self.table.name} has no column {self.column!r}")
        return (f"ALTER TABLE {self.table.name} ADD COLUMN {self.column} {self.type}",)


@dataclass(frozen=True)
class KeylessMove:
    """A table written with a PRIMARY KEY (files from before the keyless inbox) moved to the
    keyless layout under the same name, its rows in their order (which keeps the min-max
    index useful); columns added since are NULL for the moved rows."""

    table: Table
    # Columns added since that the copy computes (name -> SQL over the old row): a table
    # lacking one is moved too, keyed or not.
    computed: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.table.name}: keyless layout"

    def needed(self, con: duckdb.DuckDBPyConnection) -> bool:
        row = con.execute(
            "SELECT count(*) FROM duckdb_constraints() "
            "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'",
            [self.table.name],
        ).fetchone()
        if row and row[0]:
            return True
        return any(not has_column(con, self.table.name, column) for column, _ in self.computed)

    def statements(self) -> tuple[str, ...]:
        table = self.table.name
        staging = f"{table}__keyless"
        extra = "".join(f", {sql} AS {column}" for column, sql in self.computed)
        return (
            f"DROP TABLE IF EXISTS {staging}",
            self.table.ddl.replace(f"EXISTS {table} (", f"EXISTS {staging} (", 1),
            f"INSERT INTO {staging} BY NAME SELECT *{extra} FROM {table}",
            f"DROP TABLE {table}",
            f"ALTER TABLE {staging} RENAME TO {table}",
        )


@dataclass(frozen=True)
class DropIndex:
    """An index files from before kept and the table no longer has: its ART grows in memory
    with the table, as a key's does."""

    index: str

    @property
    def name(self) -> str:
        return f"{self.index}: dropped"

    def needed(self, con: duckdb.DuckDBPyConnection) -> bool:
        row = con.execute(
            "SELECT count(*) FROM duckdb_indexes() WHERE index_name = ?", [self.index]
        ).fetchone()
        return bool(row and row[0])

    def statements(self) -> tuple[str, ...]:
        if not self.index.isidentifier():
            raise ValueError(f"{self.index!r} is not a plain identifier")
        return (f"DROP INDEX IF EXISTS {self.index}",)


@dataclass(frozen=True)
class SeedQueue:
    """A file made before a work queue gets in it what its run used to find by reading every
    row of the tables behind it, once: the seed and its ``downstream_positions`` mark (which
    says it is done) are one transaction. A file whose ``source`` table is empty is marked by
    :data:`SEEDS` instead: there is nothing to seed."""

    table: Table
    seed: str
    step: str
    source: Table

    @property
    def name(self) -> str:
        return f"{self.table.name}: seeded"

    @property
    def mark(self) -> str:
        return queue_seeded(self.step)

    def needed(self, con: duckdb.DuckDBPyConnection) -> bool:
        row = con.execute(DOWNSTREAM_POSITIONS.count_sql("step = ?"), [self.step]).fetchone()
        return not (row and row[0])

    def statements(self) -> tuple[str, ...]:
        return (f"DELETE FROM {self.table.name}", self.seed, self.mark)


QUEUES: tuple[SeedQueue, ...] = (
    SeedQueue(SESSION_SUMMARY_QUEUE, SEED_SUMMARY_QUEUE, SUMMARY_QUEUE_STEP, CHAT_MESSAGES),
    SeedQueue(
        SESSION_SUMMARY_TRANSLATION_QUEUE,
        SEED_TRANSLATION_QUEUE,
        TRANSLATION_QUEUE_STEP,
        SESSION_SUMMARIES,
    ),
)


# Rows every file needs in a table, inserted when missing, after the tables are created.
# A file without the rows a queue is made from (a fresh one) has nothing to seed it with: it
# is marked seeded here, so only a file with rows and no mark runs its SeedQueue.
SEEDS: tuple[str, ...] = (
    SEED_INBOX_COMMITS,
    *(f"{q.mark} AND NOT EXISTS (SELECT 1 FROM {q.source.name})" for q in QUEUES),
)


# The inbox gets its column before any move, which copies it by name. A typed table moved
# here keeps its rows; its step, which has no position yet on such a file, reads the whole
# inbox once and adds only what the table lacks (lib/inbox/typed/). The LLM tables' rows
# move as they are: their writers check for a stored copy within a bounded range instead
# (lib/summaries/rows.py, lib/summaries/translations.py, lib/datasets/samples.py). A keyed
# llm_completions moved here has every column of today's DDL; a keyless one from before
# cached_prompt_tokens gets it after the move.
MIGRATIONS: tuple[AddCommitSeq | AddColumn | KeylessMove | DropIndex | SeedQueue, ...] = (
    AddCommitSeq(),
    KeylessMove(PIPELINE_EVENT_INBOX),
    KeylessMove(PIPELINE_EVENT_DEAD_LETTER),
    KeylessMove(CHAT_MESSAGES),
    KeylessMove(CHAT_SESSIONS),
    KeylessMove(TOOL_CALLS),
    KeylessMove(FLOW_NODES),
    KeylessMove(FLOW_EDGES),
    KeylessMove(SEMANTIC_SEARCHES),
    DropIndex("llm_completions_request_key"),
    KeylessMove(LLM_COMPLETIONS, computed=(("key_prefix", KEY_PREFIX_SQL),)),
    AddColumn(LLM_COMPLETIONS, "cached_prompt_tokens", "BIGINT"),
    KeylessMove(SESSION_SUMMARIES),
    KeylessMove(SESSION_SUMMARY_TRANSLATIONS),
    AddColumn(SESSION_SUMMARIES, "gate", "VARCHAR"),
    AddColumn(SESSION_SUMMARY_TRANSLATIONS, "gate", "VARCHAR"),
    KeylessMove(SESSION_SUMMARY_PARTS),
    KeylessMove(DATASET_SAMPLES),
    *QUEUES,
)

TABLE_NAMES: tuple[str, ...] = tuple(t.name for t in TABLES)
VIEW_NAMES: tuple[str, ...] = tuple(v.name for v in VIEWS)


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Run each migration the file still needs, each in its own transaction (a move that
    fails leaves the old table); returns the migrations run."""
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
        log.warning("%s: migrated (once per file)", migration.name)
        moved.append(migration.name)
    return moved


def create_all(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create every missing table, migrate what an older file needs, then (re)create the
    views, which may read the migrated tables; returns the tables moved."""
    for table in TABLES:
        for statement in table.statements:
            con.execute(statement)
    for seed in SEEDS:
        con.execute(seed)
    moved = migrate(con)
    for view in VIEWS:
        con.execute(view.ddl)
    return moved


__all__ = [
    "MIGRATIONS",
    "QUEUES",
    "SEEDS",
    "TABLES",
    "TABLE_NAMES",
    "VIEWS",
    "VIEW_NAMES",
    "AddColumn",
    "AddCommitSeq",
    "DropIndex",
    "KeylessMove",
    "SeedQueue",
    "create_all",
    "migrate",
]
