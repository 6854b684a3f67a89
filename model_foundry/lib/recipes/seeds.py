"""Seed rows: a file (JSONL, CSV, Parquet) or a read-only SQL query over the DuckDB file.

A row's id is a hash of its content, so the same seed row is the same row on every run (its
cells are found again) wherever it sits in the file; a row given twice is one row. The SQL
runs on a read-only connection (``storage.connect(read_only=True)``, as ``model-foundry
query`` does), so a recipe can read the pipeline's tables and views but never write them.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.llm.request import canonical
from model_foundry.lib.recipes.spec import Recipe


@dataclass(frozen=True)
class SeedRow:
    row_id: str
    index: int
    values: Mapping[str, Any]


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


def _sql_rows(recipe: Recipe, sql: str, db_path: Path) -> list[dict[str, Any]]:
    if not db_path.exists():
        raise recipe.error("seed.sql", f"no DuckDB file at {db_path} to query")
    with storage.connect(db_path, read_only=True) as con:
        try:
            cursor = con.execute(sql)
            names = [d[0] for d in cursor.description or ()]
            return [_plain(dict(zip(names, r, strict=True))) for r in cursor.fetchall()]
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise recipe.error("seed.sql", f"DuckDB refused it ({first})") from None


def seed_rows(
    recipe: Recipe, db_path: Path, base_dir: Path, limit: int | None = None
) -> list[SeedRow]:
    """The recipe's rows: its seed rows (each once), or ``rows`` empty rows without a seed;
    at most ``limit`` (and at most ``rows``)."""
    cap = min(x for x in (limit, recipe.rows) if x is not None) if (limit or recipe.rows) else None
    if recipe.seed is None:
        count = int(cap or 0)
        return [SeedRow(row_id({"index": i}), i, {}) for i in range(count)]
    if recipe.seed.file is not None:
        path = Path(recipe.seed.file)
        raw = _file_rows(recipe, path if path.is_absolute() else base_dir / path)
    else:
        raw = _sql_rows(recipe, str(recipe.seed.sql), db_path)
    fields = {c.seed_field for c in recipe.columns if c.type == "seed"}
    if raw:
        missing = sorted(f for f in fields if f not in raw[0])
        if missing:
            have = ", ".join(sorted(raw[0])) or "none"
            raise recipe.error(
                f"columns.{_column_of(recipe, missing[0])}.field",
                f"the seed rows have no field {missing[0]!r} (they have: {have})",
            )
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
    return next(c.name for c in recipe.columns if c.type == "seed" and c.seed_field == field)


__all__ = ["SeedRow", "row_id", "seed_rows"]
