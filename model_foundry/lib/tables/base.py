"""A table's shape in one place: its DDL and a frozen dataclass whose fields are its columns.

The dataclass is the column list: :class:`Table` derives the INSERT column list, the types
a bulk insert binds (and the inbox drain's Arrow schema) and the mapping of a result back to
rows from its fields, so a column is written once (in the DDL) and named once (as a field),
never again as a position.

Columns the database fills (``DEFAULT now()``) are fields with :data:`FILLED_BY_DB` metadata: they
are read back like any other column and left out of every insert.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import duckdb

if TYPE_CHECKING:
    import pyarrow as pa

Row = TypeVar("Row")
T = TypeVar("T")

# How an insert meets a row whose key is already stored: fail, keep the stored row, or replace it.
OnConflict = Literal["error", "nothing", "replace"]

_VERBS: Mapping[OnConflict, str] = {
    "error": "INSERT INTO",
    "nothing": "INSERT INTO",
    "replace": "INSERT OR REPLACE INTO",
}
_TAILS: Mapping[OnConflict, str] = {
    "error": "",
    "nothing": " ON CONFLICT DO NOTHING",
    "replace": "",
}

_DB_DEFAULT = "model_foundry.filled_by_db"


@functools.cache
def _arrow_types() -> Mapping[Any, pa.DataType]:
    """Python type of a field -> Arrow type of its column (JSON columns are ``str``, JSON
    text). Built on first use: pyarrow (and numpy under it) is a tenth of a second of a
    process's start, and most processes write no Arrow before their first request."""
    import pyarrow as pa

    return {
        str: pa.string(),
        int: pa.int64(),
        float: pa.float64(),
        bool: pa.bool_(),
        bytes: pa.binary(),
        datetime: pa.timestamp("us", tz="UTC"),
    }


# Python type of a field -> the SQL type its values are bound as in a bulk insert.
_SQL_TYPES: Mapping[Any, str] = {
    str: "VARCHAR",
    int: "BIGINT",
    float: "DOUBLE",
    bool: "BOOLEAN",
    bytes: "BLOB",
    datetime: "TIMESTAMPTZ",
    date: "DATE",
}


# The metadata of a field for a column the database fills on insert (its ``DEFAULT``):
# ``created_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)``.
FILLED_BY_DB: Mapping[str, bool] = types.MappingProxyType({_DB_DEFAULT: True})


def _column_type(hint: Any, scalars: Mapping[Any, T], as_list: Callable[[T], T]) -> T | None:
    """What a field's annotation maps to in ``scalars`` (``X | None`` is ``X``; a list or
    tuple of ``X`` is ``as_list`` of ``X``'s); None: inferred from the values."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kinds = [a for a in typing.get_args(hint) if a is not type(None)]
        return _column_type(kinds[0], scalars, as_list) if len(kinds) == 1 else None
    if typing.get_origin(hint) in (list, tuple):
        inner = _column_type(typing.get_args(hint)[0], scalars, as_list)
        return as_list(inner) if inner is not None else None
    return scalars.get(hint)


def _arrow_type(hint: Any) -> pa.DataType | None:
    """The Arrow type of a field's column; None: let Arrow infer it."""
    import pyarrow as pa

    return _column_type(hint, _arrow_types(), pa.list_)


def _sql_type(hint: Any) -> str | None:
    """The SQL type a field's values are bound as; None: DuckDB infers it."""
    return _column_type(hint, _SQL_TYPES, lambda inner: f"{inner}[]")


def fetch(
    con: duckdb.DuckDBPyConnection, row_type: Callable[..., T], sql: str, params: Sequence[Any] = ()
) -> list[T]:
    """Run ``sql`` and build one ``row_type`` per result row, by column name."""
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [row_type(**dict(zip(names, r, strict=True))) for r in cursor.fetchall()]


def has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    """Whether the file's ``table`` has ``column`` (a file from before a column was added
    lacks it until a writer opens it)."""
    row = con.execute(
        "SELECT count(*) FROM duckdb_columns() WHERE table_name = ? AND column_name = ?",
        [table, column],
    ).fetchone()
    return bool(row and row[0])


@dataclass(frozen=True)
class Table(Generic[Row]):
    """One table: ``name``, its ``ddl`` (``CREATE TABLE IF NOT EXISTS``), any ``indexes`` and
    ``row``, the frozen dataclass whose fields are the table's columns in DDL order."""

    name: str
    row: type[Row]
    ddl: str
    indexes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Names are formatted into the SQL this class builds (DuckDB takes no parameters for
        # identifiers): only plain identifiers defined in code may be one.
        for name in (self.name, *self.columns):
            if not name.isidentifier():
                raise ValueError(f"table {self.name!r}: {name!r} is not a plain identifier")

    @property
    def statements(self) -> tuple[str, ...]:
        """What creates the table on a file that lacks it; safe to run again."""
        return (self.ddl, *self.indexes)

    @cached_property
    def columns(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self.row))  # type: ignore[arg-type]

    @cached_property
    def insert_columns(self) -> tuple[str, ...]:
        """The columns an insert writes: all but those the database fills."""
        fields = dataclasses.fields(self.row)  # type: ignore[arg-type]
        return tuple(f.name for f in fields if not f.metadata.get(_DB_DEFAULT))

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema of :attr:`insert_columns`, from the row's field types; a field
        typed ``Any`` (or a union of types) is ``null`` here and inferred from its values."""
        import pyarrow as pa

        hints = typing.get_type_hints(self.row)
        return pa.schema(
            [pa.field(c, _arrow_type(hints[c]) or pa.null()) for c in self.insert_columns]
        )

    def insert_sql(self, on_conflict: OnConflict = "error") -> str:
        """``INSERT`` of :attr:`insert_columns` with one ``?`` per column."""
        marks = ", ".join("?" for _ in self.insert_columns)
        return (
            f"{_VERBS[on_conflict]} {self.name} ({', '.join(self.insert_columns)}) "
            f"VALUES ({marks}){_TAILS[on_conflict]}"
        )

    def values(self, row: Row) -> list[Any]:
        """``row``'s values in :attr:`insert_columns` order: :meth:`insert_sql`'s parameters."""
        return [getattr(row, c) for c in self.insert_columns]

    @cached_property
    def _unnested(self) -> str:
        """What :meth:`insert` selects: each insert column unnested from one list parameter
        bound as a list of the column's type."""
        hints = typing.get_type_hints(self.row)
        parts = []
        for c in self.insert_columns:
            kind = _sql_type(hints[c])
            parts.append(f"unnest(?::{kind}[]) AS {c}" if kind else f"unnest(?) AS {c}")
        return ", ".join(parts)

    def insert(
        self,
        con: duckdb.DuckDBPyConnection,
        rows: Sequence[Row],
        on_conflict: OnConflict = "error",
    ) -> int:
        """Insert ``rows`` in one statement (by name, one list parameter a column); how many
        were new.

        Lists, not Arrow: building an Arrow array makes pyarrow import pandas once a process
        (about 0.4 s of CPU, the larger part of a short command's writes), and a statement of
        unnested lists costs DuckDB what an Arrow scan does at these batch sizes. The inbox
        drain, whose batches are large and hot, stages Arrow (``lib/inbox/arrow_rows.py``)."""
        if not rows:
            return 0
        found = con.execute(
            f"{_VERBS[on_conflict]} {self.name} BY NAME SELECT {self._unnested}"
            f"{_TAILS[on_conflict]}",
            [[getattr(r, c) for r in rows] for c in self.insert_columns],
        ).fetchone()
        return int(found[0]) if found else 0

    def delete_all_sql(self) -> str:
        """``DELETE`` of every row (a rebuild empties its tables in its own transaction)."""
        return f"DELETE FROM {self.name}"

    def count_sql(self, where: str = "") -> str:
        """``SELECT count(*)``, optionally filtered (``where`` is SQL with ``?``)."""
        sql = f"SELECT count(*) FROM {self.name}"
        return f"{sql} WHERE {where}" if where else sql

    def select_sql(self, where: str = "") -> str:
        """``SELECT`` of every column, optionally filtered (``where`` is SQL with ``?``)."""
        sql = f"SELECT {', '.join(self.columns)} FROM {self.name}"
        return f"{sql} WHERE {where}" if where else sql

    def rows(
        self, con: duckdb.DuckDBPyConnection, sql: str | None = None, params: Sequence[Any] = ()
    ) -> list[Row]:
        """Rows of ``sql`` (default: the whole table) as :attr:`row`, matched by column name."""
        return fetch(con, self.row, sql or self.select_sql(), params)


@dataclass(frozen=True)
class View:
    """A view over the tables: ``CREATE OR REPLACE``, so a changed definition replaces the old."""

    name: str
    query: str

    @property
    def ddl(self) -> str:
        return f"CREATE OR REPLACE VIEW {self.name} AS {self.query}"


__all__ = ["FILLED_BY_DB", "OnConflict", "Table", "View", "fetch", "has_column"]
