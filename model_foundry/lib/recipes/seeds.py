"""Seed rows: a file (JSONL, CSV, Parquet) or a read-only SQL query over the DuckDB file.

A row's id is a hash of its content, so the same seed row is the same row on every run (its
cells are found again) wherever it sits in the file; a row given twice is one row. The SQL
runs on a read-only connection (``storage.connect(read_only=True)``, as ``model-foundry
query`` does), so a recipe can read the pipeline's tables and views but never write them.

An incremental SQL seed (``seed.incremental``, a position column such as the inbox's
``commit_seq``) takes only the rows past the recipe's mark in ``dataset_recipe_seed_marks``:
the query becomes a relation filtered on ``position > mark``, which DuckDB pushes into the
table's scan, so a run reads the row groups past the mark and never rescans what earlier runs
took. The mark moves only once the run's cells are stored (:func:`advance_mark`), as the inbox
readers' positions do (``lib/inbox/commit_spans.py``): a run killed before then reads the same
rows again and finds their cells stored. New rows are numbered on from the last run's, so a
row's index (and the split the export gives it) stays what it was.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.llm.request import canonical
from model_foundry.lib.recipes.spec import Recipe
from model_foundry.lib.tables.recipes import DATASET_RECIPE_SEED_MARKS

_INTEGERS = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT"}  # fmt: skip
_MARK = f"SELECT position, next_row_index FROM {DATASET_RECIPE_SEED_MARKS.name} WHERE recipe = ?"
_SET_MARK = f"""
INSERT OR REPLACE INTO {DATASET_RECIPE_SEED_MARKS.name}
    (recipe, position, next_row_index, run_id, updated_at)
VALUES (?, ?, ?, ?, now())
"""


@dataclass(frozen=True)
class SeedRow:
    row_id: str
    index: int
    values: Mapping[str, Any]
    # An incremental seed's: the row's value of its position column.
    position: int | None = None


@dataclass(frozen=True)
class SeedMark:
    """How far an incremental seed has read: ``position`` None when nothing yet."""

    position: int | None = None
    next_index: int = 0


def row_id(value: Any) -> str:
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()[:20]


def _plain(value: Any) -> Any:
    """A value JSON can carry (DuckDB's dates and decimals as text)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def _file_rows(recipe: Recipe, path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise recipe.error("seed.file", f"no file at {path}")
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            rows = []
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                value = json.loads(line)
                if not isinstance(value, dict):
                    raise recipe.error("seed.file", f"{path} line {n} is not a JSON object")
                rows.append(value)
            return rows
        if suffix == ".csv":
            with path.open(encoding="utf-8", newline="") as f:
                return [dict(r) for r in csv.DictReader(f)]
        import pyarrow.parquet as pq

        return [_plain(r) for r in pq.read_table(path).to_pylist()]
    except (json.JSONDecodeError, UnicodeDecodeError, csv.Error, OSError) as exc:
        raise recipe.error("seed.file", f"{path} cannot be read ({exc})") from None
    except Exception as exc:  # pyarrow's errors have no common public base
        if exc.__class__.__module__.startswith("pyarrow"):
            raise recipe.error("seed.file", f"{path} cannot be read ({exc})") from None
        raise


def read_mark(con: duckdb.DuckDBPyConnection, recipe: str) -> SeedMark:
    try:
        # fetchall: a result left open would block the seed's query on this connection.
        found = con.execute(_MARK, [recipe]).fetchall()
    except duckdb.CatalogException:  # a read-only file from before the table existed
        return SeedMark()
    return SeedMark(int(found[0][0]), int(found[0][1])) if found else SeedMark()


def past_mark(rel: duckdb.DuckDBPyRelation, column: str, mark: SeedMark) -> duckdb.DuckDBPyRelation:
    """The query's rows past ``mark``. Built as expressions, not SQL text (the mark is a typed
    constant), and a filter DuckDB pushes down into the table's scan, so the scan skips the
    row groups whose positions are all at or below the mark."""
    position = duckdb.ColumnExpression(column)
    rel = rel.filter(position.isnotnull())
    if mark.position is not None:
        rel = rel.filter(position > duckdb.ConstantExpression(mark.position))
    return rel


def _sql_rows(
    recipe: Recipe, sql: str, db_path: Path, position: str | None = None
) -> tuple[list[dict[str, Any]], SeedMark | None]:
    """The query's rows; for an incremental seed (``position``, its position column) only
    those past the recipe's mark, and the mark."""
    if not db_path.exists():
        raise recipe.error("seed.sql", f"no DuckDB file at {db_path} to query")
    with storage.connect(db_path, read_only=True) as con:
        mark = read_mark(con, recipe.name) if position is not None else None
        try:
            if position is None or mark is None:
                cursor = con.execute(sql)
                names = [d[0] for d in cursor.description or ()]
                return [_plain(dict(zip(names, r, strict=True))) for r in cursor.fetchall()], None
            rel = _positioned(recipe, con.sql(sql), position, mark)
            names = rel.columns
            return [_plain(dict(zip(names, r, strict=True))) for r in rel.fetchall()], mark
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise recipe.error("seed.sql", f"DuckDB refused it ({first})") from None


def _positioned(
    recipe: Recipe, rel: duckdb.DuckDBPyRelation | None, column: str, mark: SeedMark
) -> duckdb.DuckDBPyRelation:
    """The query's relation past ``mark``, its position column checked."""
    if rel is None:
        raise recipe.error("seed.sql", "is not a query that returns rows")
    if column not in rel.columns:
        raise recipe.error(
            "seed.incremental",
            f"the query's rows have no column {column!r} (they have: {', '.join(rel.columns)})",
        )
    kind = str(rel.types[rel.columns.index(column)])
    if kind not in _INTEGERS:
        raise recipe.error(
            "seed.incremental", f"column {column!r} is {kind}, not an integer position"
        )
    return past_mark(rel, column, mark)


def _incremental(
    recipe: Recipe, raw: list[dict[str, Any]], fields: set[str], mark: SeedMark,
    cap: int | None,
) -> list[SeedRow]:  # fmt: skip
    """Rows in position order (ties by row id, so a row read again gets its index again),
    numbered on from ``mark``. A position's rows are never split between runs: the cap stops
    before a position that would pass it, unless it is the first."""
    column = str(recipe.seed.incremental if recipe.seed else "")
    picked = [(int(v[column]), {f: v.get(f) for f in sorted(fields)}) for v in raw]
    ordered = sorted(((pos, row_id(p), p) for pos, p in picked), key=lambda x: x[:2])
    out: list[SeedRow] = []
    seen: set[str] = set()
    for pos, group in groupby(ordered, key=lambda x: x[0]):
        rows = []
        for _, rid, values in group:
            if rid not in seen:
                seen.add(rid)
                rows.append((rid, values))
        if cap is not None and out and len(out) + len(rows) > cap:
            break
        for rid, values in rows:
            out.append(SeedRow(rid, mark.next_index + len(out), values, pos))
    return out


def advance_mark(
    db_path: Path, recipe: Recipe, rows: list[SeedRow], pending: Collection[str],
    run_id: str | None,
) -> SeedMark | None:  # fmt: skip
    """After a run's cells are stored: the mark past every row whose cells are all in, up to
    the first row with a request that got no answer (the next run reads it again, with the
    rows after it, which get their indexes again). The new mark, or None when it stays."""
    waiting = [r.position for r in rows if r.row_id in pending and r.position is not None]
    first_waiting = min(waiting) if waiting else None
    done = [
        r for r in rows
        if r.position is not None and (first_waiting is None or r.position < first_waiting)
    ]  # fmt: skip
    if not done:
        return None
    mark = SeedMark(done[-1].position, done[-1].index + 1)
    params = [recipe.name, mark.position, mark.next_index, run_id]
    storage.run_in_transaction(db_path, lambda con: con.execute(_SET_MARK, params))
    return mark


def seed_rows(
    recipe: Recipe, db_path: Path, base_dir: Path, limit: int | None = None
) -> list[SeedRow]:
    """The recipe's rows: its seed rows (each once), or ``rows`` empty rows without a seed;
    at most ``limit`` (and at most ``rows``)."""
    cap = min(x for x in (limit, recipe.rows) if x is not None) if (limit or recipe.rows) else None
    if recipe.seed is None:
        count = int(cap or 0)
        return [SeedRow(row_id({"index": i}), i, {}) for i in range(count)]
    mark: SeedMark | None = None
    if recipe.seed.file is not None:
        path = Path(recipe.seed.file)
        raw = _file_rows(recipe, path if path.is_absolute() else base_dir / path)
    else:
        raw, mark = _sql_rows(recipe, str(recipe.seed.sql), db_path, recipe.seed.incremental)
    fields = recipe.seed_fields()
    if raw:
        missing = sorted(f for f in fields if f not in raw[0])
        if missing:
            have = ", ".join(sorted(raw[0])) or "none"
            raise recipe.error(
                f"columns.{_column_of(recipe, missing[0])}.field",
                f"the seed rows have no field {missing[0]!r} (they have: {have})",
            )
    if mark is not None:
        return _incremental(recipe, raw, fields, mark, cap)
    out: list[SeedRow] = []
    seen: set[str] = set()
    for values in raw:
        picked = {f: values.get(f) for f in sorted(fields)}
        rid = row_id(picked)
        if rid in seen:
            continue
        seen.add(rid)
        out.append(SeedRow(rid, len(out), picked))
        if cap is not None and len(out) >= cap:
            break
    return out


def _column_of(recipe: Recipe, field: str) -> str:
    return next(c.name for c in recipe.columns if field in c.seed_fields())


__all__ = [
    "SeedMark",
    "SeedRow",
    "advance_mark",
    "past_mark",
    "read_mark",
    "row_id",
    "seed_rows",
]
