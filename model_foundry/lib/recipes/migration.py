"""Samples stored before ``dataset collect`` ran as a recipe become the cells they would be
under it, once per file, so collecting again asks nothing already paid for.

Each ``dataset_samples`` row becomes the ``llm_text`` cell of the built-in recipe
(``collect.py``) that asks the same request: recipe ``collect_<dataset>``, the row of its
messages, the column of its role, its sample, and a cell key over its stored request key,
spelled as ``generate.py`` spells keys (``canonical`` JSON, sha256). The whole move is one
``INSERT ... SELECT`` in the transaction that marks it done in ``downstream_positions``.

It runs when a collection starts (``collect.collect``), not when the file is opened:
``lib/storage.py`` sits below ``lib/recipes`` and the cell key is the recipe's, so opening
the file cannot know it without an import running back up.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.tables.datasets import DATASET_SAMPLES
from model_foundry.lib.tables.positions import DOWNSTREAM_POSITIONS
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS

# The downstream_positions step whose row says this file's samples are cells.
STEP = "recipe_cells_from_dataset_samples"

# Names as ``collect.ident`` makes them: lower case, anything but a-z, 0-9 and _ made _.
_IDENT = "regexp_replace(lower({}), '[^a-z0-9_]', '_', 'g')"
_RECIPE = "'collect_' || " + _IDENT.format("s.dataset")
_COLUMN = "'answer_' || " + _IDENT.format("s.role")
# ``collect.prompt_row_id``: the stored messages JSON is the text the row id hashes.
_ROW_ID = "left(sha256(s.messages), 20)"

# The cell key: sha256 of canonical([recipe, row_id, column, sample, request_key]); every
# part but the sample is a string needing no JSON escape (identifiers and hex digests).
_KEY = (
    "sha256('[\"' || recipe || '\",\"' || row_id || '\",\"' || column_name || '\",' || "
    "sample_index || ',\"' || request_key || '\"]')"
)

MIGRATE_SQL = f"""
INSERT INTO {DATASET_RECIPE_CELLS.name} BY NAME
WITH named AS (
    SELECT {_RECIPE} AS recipe, s.version, {_ROW_ID} AS row_id, {_COLUMN} AS column_name,
           s.sample_index, s.request_key, s.response, s.slot, s.model, s.prompt_tokens,
           s.completion_tokens, s.run_id, s.created_at
    FROM {DATASET_SAMPLES.name} s
), keyed AS (
    SELECT *, {_KEY} AS cell_key,
           dense_rank() OVER (PARTITION BY recipe, version ORDER BY row_id) - 1 AS row_index
    FROM named
)
SELECT recipe, version, cell_key, row_id, row_index, column_name, 'llm_text' AS column_type,
       sample_index, to_json(regexp_replace(response, '^\\s+|\\s+$', '', 'g')) AS value,
       'ok' AS status, NULL AS cause, request_key, slot, model, prompt_tokens,
       completion_tokens, run_id, created_at
FROM keyed k
WHERE NOT EXISTS (
    SELECT 1 FROM {DATASET_RECIPE_CELLS.name} c
    WHERE c.recipe = k.recipe AND c.version = k.version AND c.cell_key = k.cell_key
)
QUALIFY row_number() OVER (PARTITION BY recipe, version, cell_key ORDER BY created_at) = 1
"""

_DONE = f"SELECT count(*) FROM {DOWNSTREAM_POSITIONS.name} WHERE step = ?"
_MARK = (
    f"INSERT OR REPLACE INTO {DOWNSTREAM_POSITIONS.name} (step, position, updated_at) "
    "VALUES (?, ?, now())"
)


def samples_to_cells(con: duckdb.DuckDBPyConnection) -> int | None:
    """Move the samples into cells unless this file's were moved already; how many cells
    were written (None: done before). Call it inside a transaction."""
    row = con.execute(_DONE, [STEP]).fetchone()
    if row and row[0]:
        return None
    found = con.execute(MIGRATE_SQL).fetchone()
    moved = int(found[0]) if found else 0
    con.execute(_MARK, [STEP, moved])
    return moved


def migrate_samples(db_path: str | Path) -> int | None:
    """:func:`samples_to_cells` in a transaction of its own."""
    return storage.run_in_transaction(db_path, samples_to_cells)


__all__ = ["MIGRATE_SQL", "STEP", "migrate_samples", "samples_to_cells"]
