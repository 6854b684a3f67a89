"""A recipe's cells in DuckDB: the ones already stored, new ones appended exactly once, and
the recipe's own wide view.

No key index: a write checks which of its cell keys the version holds, inside the same
transaction as the insert (as ``datasets/samples.py`` does for samples), so a retried or
concurrent write adds each cell once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.recipes.spec import Column, Recipe
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS, RecipeCellRow

_HELD = f"""
SELECT DISTINCT cell_key FROM {DATASET_RECIPE_CELLS.name}
WHERE recipe = ? AND version = ? AND cell_key IN (SELECT unnest(?::VARCHAR[]))
"""

_ALL_STORED = f"""
SELECT cell_key, any_value(value), any_value(status), any_value(cause)
FROM {DATASET_RECIPE_CELLS.name} WHERE recipe = ? GROUP BY cell_key
"""


@dataclass(frozen=True)
class StoredCell:
    value: Any
    status: str
    cause: str | None


def recipe_cells(db_path: Path, recipe: str) -> dict[str, StoredCell]:
    """Every stored cell of ``recipe``, in any version, by key: read once when a run starts,
    so a row's next column is not a read of the file away."""
    if not db_path.exists():
        return {}
    with storage.connect(db_path, read_only=True) as con:
        try:
            found = con.execute(_ALL_STORED, [recipe]).fetchall()
        except duckdb.CatalogException:
            return {}
    return {k: StoredCell(json.loads(v) if v is not None else None, s, c) for k, v, s, c in found}


def write_cells(db_path: Path, rows: Sequence[RecipeCellRow]) -> int:
    """The cells their version does not hold yet (by cell key), in one transaction; how many
    were new."""
    if not rows:
        return 0

    def work(con: duckdb.DuckDBPyConnection) -> int:
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

    return storage.run_in_transaction(db_path, work)


_CASTS = {"integer": "BIGINT", "number": "DOUBLE", "boolean": "BOOLEAN"}


def _typed(expr: str, kind: str) -> str:
    if kind in _CASTS:
        return f"TRY_CAST({expr} AS {_CASTS[kind]})"
    if kind == "string":
        return f"({expr} ->> '$')"
    return expr


def _column_sql(c: Column) -> list[str]:
    q = f'w."{c.name}"'
    if c.type == "sampler" and c.sampler == "uniform":
        return [f'{_typed(q, "integer" if c.integer else "number")} AS "{c.name}"']
    if c.type == "validation":
        return [f'{_typed(q, "boolean")} AS "{c.name}"']
    if c.schema() is None:
        return [f'{_typed(q, "string")} AS "{c.name}"']
    out = [f'{q} AS "{c.name}"']
    for prop, kind in c.sub_columns().items():
        out.append(f"""{_typed(f"({q} -> '$.{prop}')", kind)} AS "{c.name}_{prop}\"""")
    return out


def recipe_view_sql(recipe: Recipe) -> str:
    """``recipe_<name>``: one row per seed row and version, a typed column per column, the
    sub-columns of structured answers (``<column>_<property>``), and why a row is held back.
    Names go into the SQL as identifiers (DuckDB takes no parameters for them): ``spec.py``
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
    "StoredCell",
    "make_view",
    "recipe_cells",
    "recipe_view_sql",
    "write_cells",
]
