"""A recipe's cells in DuckDB: the ones already stored, new ones appended exactly once, and
the recipe's own wide view.

No key index: a write checks which of its cell keys the version holds, inside the same
transaction as the insert (as ``datasets/samples.py`` does for samples), so a retried or
concurrent write adds each cell once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.recipes.columns.base import Column
from model_foundry.lib.recipes.spec import Recipe
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS, RecipeCellRow

_HELD = f"""
SELECT DISTINCT cell_key FROM {DATASET_RECIPE_CELLS.name}
WHERE recipe = ? AND version = ? AND cell_key IN (SELECT unnest(?::VARCHAR[]))
"""

_ALL_STORED = f"""
SELECT cell_key, any_value(value), any_value(status), any_value(cause),
       any_value(request_key), any_value(slot), any_value(model)
FROM {DATASET_RECIPE_CELLS.name} WHERE recipe = ? GROUP BY cell_key
"""


@dataclass(frozen=True)
class StoredCellValue:
    """What a stored cell holds, found by its key: a run takes it rather than ask again, and
    keeps who answered it (its first request's key, slot and model)."""

    value: Any
    status: str
    cause: str | None
    request_key: str | None = None
    slot: str | None = None
    model: str | None = None


def recipe_cells(db_path: Path, recipe: str) -> dict[str, StoredCellValue]:
    """Every stored cell of ``recipe``, in any version, by key: read once when a run starts,
    so a row's next column is not a read of the file away."""
    if not db_path.exists():
        return {}
    with storage.connect(db_path, read_only=True) as con:
        try:
            found = con.execute(_ALL_STORED, [recipe]).fetchall()
        except duckdb.CatalogException:
            return {}
    return {
        k: StoredCellValue(json.loads(v) if v is not None else None, s, c, rk, slot, model)
        for k, v, s, c, rk, slot, model in found
    }


def write_cells(db_path: Path, rows: Sequence[RecipeCellRow]) -> int:
    """The cells their version does not hold yet (by cell key), in one transaction; how many
    were new."""
    if not rows:
        return 0
    return storage.run_in_transaction(db_path, lambda con: insert_cells(con, rows))


def insert_cells(con: duckdb.DuckDBPyConnection, rows: Sequence[RecipeCellRow]) -> int:
    """:func:`write_cells` inside the caller's transaction."""
    new: list[RecipeCellRow] = []
    groups: dict[tuple[str, str], list[RecipeCellRow]] = {}
    for r in rows:
        groups.setdefault((r.recipe, r.version), []).append(r)
    for (recipe, version), group in groups.items():
        keys = list(dict.fromkeys(r.cell_key for r in group))
        held = {k for (k,) in con.execute(_HELD, [recipe, version, keys]).fetchall()}
        for r in group:
            if r.cell_key not in held:
                held.add(r.cell_key)
                new.append(r)
    return DATASET_RECIPE_CELLS.insert(con, new)


# New cells go to DuckDB this many at a time, or after this long, and at the end: one
# transaction per cell would make the file's lock the pace of a run.
CELLS_PER_WRITE = 500
WRITE_EVERY_S = 2.0


class CellWriter:
    """New cells, written ``CELLS_PER_WRITE`` at a time or every ``WRITE_EVERY_S``."""

    def __init__(self, recipe: str, version: str, run_id: str | None, db_path: Path) -> None:
        self.recipe, self.version, self.run_id, self.db_path = recipe, version, run_id, db_path
        self.cells: list[RecipeCellRow] = []
        self.written_at = time.monotonic()

    def add(self, row_id: str, row_index: int, column: Column, sample: int, key: str,
            value: Any, cause: str | None, **more: Any) -> None:  # fmt: skip
        self.cells.append(RecipeCellRow(
            recipe=self.recipe, version=self.version, cell_key=key, row_id=row_id,
            row_index=row_index, column_name=column.name, column_type=column.column_type,
            sample_index=sample, value=json.dumps(value, ensure_ascii=False),
            status="rejected" if cause else "ok", cause=cause,
            request_key=more.get("request_key"), slot=more.get("slot"),
            model=more.get("model"), prompt_tokens=more.get("prompt_tokens"),
            completion_tokens=more.get("completion_tokens"), run_id=self.run_id,
        ))  # fmt: skip

    def write(self, force: bool = False) -> int:
        """The cells written now (none unless due, or ``force``)."""
        due = time.monotonic() - self.written_at >= WRITE_EVERY_S
        if not self.cells or not (force or due or len(self.cells) >= CELLS_PER_WRITE):
            return 0
        written = write_cells(self.db_path, self.cells)
        self.cells, self.written_at = [], time.monotonic()
        return written


_CASTS = {"integer": "BIGINT", "number": "DOUBLE", "boolean": "BOOLEAN"}


def _typed(expr: str, kind: str) -> str:
    if kind in _CASTS:
        return f"TRY_CAST({expr} AS {_CASTS[kind]})"
    if kind == "string":
        return f"({expr} ->> '$')"
    return expr


def _column_sql(c: Column) -> list[str]:
    q = f'w."{c.name}"'
    if c.value_type() != "json":
        return [f'{_typed(q, c.value_type())} AS "{c.name}"']
    out = [f'{q} AS "{c.name}"']
    for prop, kind in c.sub_columns().items():
        out.append(f"""{_typed(f"({q} -> '$.{prop}')", kind)} AS "{c.name}_{prop}\"""")
    return out


def recipe_view_sql(recipe: Recipe) -> str:
    """``recipe_<name>``: one row per seed row and version, a typed column per column, the
    sub-columns of structured answers (``<column>_<property>``), and why a row is held back.
    Names go into the SQL as identifiers (DuckDB takes no parameters for them): ``parse.py``
    lets only lower-case identifiers through, and they are checked again here."""
    names = [recipe.name, *(c.name for c in recipe.columns)]
    names += [p for c in recipe.columns for p in c.sub_columns()]
    bad = [n for n in names if not n.isidentifier()]
    if bad:
        raise ValueError(f"{bad[0]!r} is not a plain identifier")
    picks = ",\n".join(
        f"any_value(value) FILTER (WHERE column_name = '{c.name}') AS \"{c.name}\""
        for c in recipe.columns
    )
    shown = ",\n".join(s for c in recipe.columns for s in _column_sql(c))
    return f"""
CREATE OR REPLACE VIEW recipe_{recipe.name} AS
WITH newest AS (
    SELECT * FROM {DATASET_RECIPE_CELLS.name}
    WHERE recipe = '{recipe.name}' AND sample_index = 0
    QUALIFY row_number() OVER (
        PARTITION BY version, row_id, column_name ORDER BY created_at DESC
    ) = 1
), wide AS (
    SELECT version, row_id, min(row_index) AS row_index,
    {picks},
    bool_or(status <> 'ok') AS rejected,
    string_agg(column_name || ': ' || cause, '; ') FILTER (WHERE cause IS NOT NULL) AS causes
    FROM newest GROUP BY version, row_id
)
SELECT w.version, w.row_id, w.row_index,
{shown},
w.rejected, w.causes
FROM wide w
"""


def make_view(db_path: Path, recipe: Recipe) -> str:
    """(Re)creates the recipe's view; its name."""
    sql = recipe_view_sql(recipe)
    storage.run_in_transaction(db_path, lambda con: con.execute(sql))
    return f"recipe_{recipe.name}"


__all__ = [
    "CELLS_PER_WRITE",
    "WRITE_EVERY_S",
    "CellWriter",
    "StoredCellValue",
    "insert_cells",
    "make_view",
    "recipe_cells",
    "recipe_view_sql",
    "write_cells",
]
