"""``dataset_recipe_cells``: every cell a dataset recipe generated, one row each, keyless.

A cell is one column's value for one row (and one sample of an LLM column). It is appended
once per ``cell_key`` and version, a hash of the recipe, the row, the column, the sample and
what the cell read (for an LLM cell its request key, which covers the rendered prompt), so a
run finds the cells it already has and a changed template makes new cells only for the
columns it changes. ``status`` is ``ok`` or ``rejected`` (a gate or a validation failed,
``cause`` says which); a request that got no answer makes no cell, and the next run asks it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table, View


def ident(name: str) -> str:
    """``name`` as part of a built-in recipe's identifier (``collect_<dataset>``,
    ``judge_<dataset>``): lower case, anything but a-z, 0-9 and _ made _."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


# :func:`ident` in SQL, over the expression put in for ``{}``.
IDENT_SQL = "regexp_replace(lower({}), '[^a-z0-9_]', '_', 'g')"


@dataclass(frozen=True)
class RecipeCellRow:
    """One generated cell. ``value`` is JSON text (a structured answer is an object)."""

    recipe: str
    version: str
    cell_key: str
    row_id: str
    row_index: int
    column_name: str
    column_type: str
    sample_index: int
    value: str | None
    status: str
    cause: str | None
    request_key: str | None
    slot: str | None
    model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    run_id: str | None
    created_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


DATASET_RECIPE_CELLS: Table[RecipeCellRow] = Table(
    "dataset_recipe_cells",
    RecipeCellRow,
    """
    CREATE TABLE IF NOT EXISTS dataset_recipe_cells (
        recipe VARCHAR NOT NULL,
        version VARCHAR NOT NULL,
        cell_key VARCHAR NOT NULL,
        row_id VARCHAR NOT NULL,
        row_index BIGINT NOT NULL,
        column_name VARCHAR NOT NULL,
        column_type VARCHAR NOT NULL,
        sample_index INTEGER NOT NULL,
        value JSON,
        status VARCHAR NOT NULL,
        cause VARCHAR,
        request_key VARCHAR,
        slot VARCHAR,
        model VARCHAR,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        run_id VARCHAR,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)


@dataclass(frozen=True)
class RecipeSeedMarkRow:
    """How far a recipe with an incremental SQL seed has read: ``position`` is the highest
    value of its position column whose rows' cells are all stored, and ``next_row_index`` the
    row index the next row past it gets."""

    recipe: str
    position: int
    next_row_index: int
    run_id: str | None
    updated_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


# One row per recipe with an incremental seed (a handful): the key's index stays this small.
DATASET_RECIPE_SEED_MARKS: Table[RecipeSeedMarkRow] = Table(
    "dataset_recipe_seed_marks",
    RecipeSeedMarkRow,
    """
    CREATE TABLE IF NOT EXISTS dataset_recipe_seed_marks (
        recipe VARCHAR PRIMARY KEY,
        position BIGINT NOT NULL,
        next_row_index BIGINT NOT NULL,
        run_id VARCHAR,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

# Each recipe's rows, wide: the newest cell of each column (sample 0) as one JSON object per
# row, and whether a cell of the row was held back and why. Each recipe's run also makes a
# view of its own, ``recipe_<name>``, with a typed SQL column per column (``lib/recipes``).
DATASET_RECIPE_ROWS = View(
    "dataset_recipe_rows",
    """
    WITH newest AS (
        SELECT * FROM dataset_recipe_cells WHERE sample_index = 0
        QUALIFY row_number() OVER (
            PARTITION BY recipe, version, row_id, column_name ORDER BY created_at DESC
        ) = 1
    )
    SELECT recipe, version, row_id, min(row_index) AS row_index,
           json_group_object(column_name, value) AS cells,
           bool_or(status <> 'ok') AS rejected,
           string_agg(column_name || ': ' || cause, '; ') FILTER (WHERE cause IS NOT NULL)
               AS causes
    FROM newest
    GROUP BY recipe, version, row_id
    """,
)

__all__ = [
    "DATASET_RECIPE_CELLS",
    "DATASET_RECIPE_ROWS",
    "DATASET_RECIPE_SEED_MARKS",
    "IDENT_SQL",
    "RecipeCellRow",
    "RecipeSeedMarkRow",
    "ident",
]
