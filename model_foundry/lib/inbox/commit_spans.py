"""Reading the inbox by commit position (the tables: ``lib/tables/positions.py``).

A downstream step reads its :class:`Span`, the commits after its stored position up to the
last one its snapshot sees, writes what it made of them and then :func:`advance` in the same
transaction: a run killed at any instant either committed both or neither, so no commit is
skipped and none is read twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from model_foundry.lib.tables.positions import DOWNSTREAM_POSITIONS, PIPELINE_EVENT_INBOX_COMMITS

COMMITS = PIPELINE_EVENT_INBOX_COMMITS.name
POSITIONS = DOWNSTREAM_POSITIONS.name

# A step that has read nothing: rows stored before commit positions existed carry 0.
NOTHING_READ = -1

_TAKE_NEXT = f"UPDATE {COMMITS} SET last_commit_seq = last_commit_seq + 1 RETURNING last_commit_seq"


def next_commit_seq(con: duckdb.DuckDBPyConnection) -> int:
    """The writer's next commit number, taken inside its open transaction. A concurrent
    writer's transaction that took one first makes this raise DuckDB's write-write conflict
    (a ``TransactionException``), which the writer retries after that one ends."""
    row = con.execute(_TAKE_NEXT).fetchone()
    if row is None:
        raise RuntimeError(f"{COMMITS} has no row; storage.connect creates it with the table")
    return int(row[0])


def last_commit_seq(con: duckdb.DuckDBPyConnection) -> int:
    """The last commit this connection's snapshot sees; every smaller one is visible too."""
    row = con.execute(f"SELECT max(last_commit_seq) FROM {COMMITS}").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def position(con: duckdb.DuckDBPyConnection, step: str) -> int:
    row = con.execute(f"SELECT position FROM {POSITIONS} WHERE step = ?", [step]).fetchone()
    return int(row[0]) if row else NOTHING_READ


@dataclass(frozen=True)
class Span:
    """The commits a step reads in one run: ``after < commit_seq <= upto``."""

    step: str
    after: int
    upto: int

    @property
    def empty(self) -> bool:
        return self.upto <= self.after

    @property
    def params(self) -> list[int]:
        """The two ``?`` of :data:`IN_SPAN`."""
        return [self.after, self.upto]


# The SQL condition that selects a span's inbox rows (alias ``i``).
IN_SPAN = "i.commit_seq > ? AND i.commit_seq <= ?"


def span(con: duckdb.DuckDBPyConnection, step: str) -> Span:
    """What ``step`` has not read yet, as its transaction's snapshot shows it."""
    return Span(step, position(con, step), last_commit_seq(con))


def advance(con: duckdb.DuckDBPyConnection, done: Span) -> None:
    """Record ``done`` as read; call it in the transaction that wrote the span's rows."""
    con.execute(
        f"INSERT OR REPLACE INTO {POSITIONS} (step, position, updated_at) VALUES (?, ?, now())",
        [done.step, done.upto],
    )


def reset(con: duckdb.DuckDBPyConnection, step: str) -> None:
    """Forget what ``step`` has read: its next run reads the whole inbox."""
    con.execute(f"DELETE FROM {POSITIONS} WHERE step = ?", [step])


__all__ = [
    "IN_SPAN",
    "NOTHING_READ",
    "Span",
    "advance",
    "last_commit_seq",
    "next_commit_seq",
    "position",
    "reset",
    "span",
]
