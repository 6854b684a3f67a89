"""Samples and verdicts stored before ``dataset collect`` ran as recipes become the cells they
would be under them, once per file, so collecting and judging again ask nothing already paid
for.

Each ``dataset_samples`` row becomes the ``llm_text`` cell of the built-in recipe
(``collect.py``) that asks the same request: recipe ``collect_<dataset>``, the row of its
messages, the column of its role, its sample, and a cell key over its stored request key,
spelled as ``generate.py`` spells keys (``canonical`` JSON, sha256). The whole move is one
``INSERT ... SELECT`` in the transaction that marks it done in ``downstream_positions``.

Verdicts (``dataset_judgements``, two asks per comparison) become the judge recipe's cells
(``collect_judge.py``) in Python, since a cell's key is its requests' keys, planned for the
judge slot (``cells_from_verdicts``).

Both run when a collection or its judging starts, not when the file is opened:
``lib/storage.py`` sits below ``lib/recipes`` and the cell key is the recipe's, so opening
the file cannot know it without an import running back up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.llm import LlmRun
from model_foundry.lib.recipes.cells import insert_cells
from model_foundry.lib.recipes.collect_judge import (
    CONVERSATION,
    QUALITY,
    VERDICT,
    conversation,
    judge_recipe,
)
from model_foundry.lib.recipes.columns.judge import PAIR_ORDERS, JudgeColumn, pairwise_value
from model_foundry.lib.recipes.generate import cell_key
from model_foundry.lib.recipes.llm_cells import cell_requests, requests_key
from model_foundry.lib.tables.datasets import DATASET_SAMPLES
from model_foundry.lib.tables.judgements import DATASET_JUDGEMENTS, comparison_id
from model_foundry.lib.tables.positions import DOWNSTREAM_POSITIONS
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS, IDENT_SQL, RecipeCellRow

# The downstream_positions steps whose rows say this file's samples, and its verdicts, are
# cells.
STEP = "recipe_cells_from_dataset_samples"
JUDGE_STEP = "recipe_cells_from_dataset_judgements"

_RECIPE = "'collect_' || " + IDENT_SQL.format("s.dataset")
_COLUMN = "'answer_' || " + IDENT_SQL.format("s.role")
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


_VERDICTS = f"""
SELECT j.dataset, j.version, j.prompt_id, j.answer_a, j.answer_b,
       list({{'first': j.first, 'status': j.status, 'a': j.score_a, 'b': j.score_b,
              'reason': j.reason, 'cause': j.cause}} ORDER BY j.first) AS asks,
       any_value(j.judge_model), any_value(j.run_id), any_value(sa.messages::VARCHAR),
       any_value(sa.response), any_value(sb.response)
FROM {DATASET_JUDGEMENTS.name} j
JOIN dataset_samples sa
  ON sa.dataset = j.dataset AND sa.version = j.version AND sa.request_key = j.answer_a
JOIN dataset_samples sb
  ON sb.dataset = j.dataset AND sb.version = j.version AND sb.request_key = j.answer_b
WHERE j.judge_slot = ?
GROUP BY ALL
ORDER BY j.dataset, j.version, j.prompt_id, j.answer_a, j.answer_b
"""


def cells_from_verdicts(con: duckdb.DuckDBPyConnection, run: LlmRun, judge_slot: str) -> int | None:
    """The judge slot's stored verdicts made the judge recipe's cells, once per file; how
    many cells were written (None: done before). Each comparison's two asks make the cell the
    recipe would have made of them: the same key (the recipe's requests, keyed for the judge
    slot as it is now), its winner by the pairwise judge's rule, and held back (``unparsed``)
    when an ask did not parse. Verdicts of another judge slot are left: their cell key would
    claim the current judge's answer."""
    done = con.execute(_DONE, [JUDGE_STEP]).fetchone()
    if done and done[0]:
        return None
    cells: list[RecipeCellRow] = []
    index: dict[tuple[str, str], int] = {}
    for dataset, version, _, a_key, b_key, asks, model, run_id, messages, ra, rb in con.execute(
        _VERDICTS, [judge_slot]
    ).fetchall():
        recipe = judge_recipe(dataset)
        column = recipe.column(VERDICT)
        assert isinstance(column, JudgeColumn)
        row_id = comparison_id(a_key, b_key)
        values = {CONVERSATION: conversation(json.loads(messages)),
                  "answer_a": ra, "answer_b": rb}  # fmt: skip
        planned = [run.plan(r) for r in cell_requests(recipe, column, row_id, 0, values)]
        verdicts: dict[str, Any] = {}
        cause = None
        for ask in asks:
            order = "ab" if ask["first"] == "a" else "ba"
            if ask["status"] != "ok":
                cause = cause or ask["cause"] or "unparsed"
                verdicts[order] = None
                continue
            one, two = (ask["a"], ask["b"]) if ask["first"] == "a" else (ask["b"], ask["a"])
            verdicts[order] = {f"{QUALITY.name}_1": one, f"{QUALITY.name}_2": two,
                               "reason": ask["reason"] or ""}  # fmt: skip
        if set(verdicts) != set(PAIR_ORDERS):
            continue  # one order only: the recipe asks both
        value = verdicts if cause else pairwise_value(column, verdicts)
        n = index.get((dataset, version), 0)
        index[(dataset, version)] = n + 1
        cells.append(RecipeCellRow(
            recipe=recipe.name, version=version,
            cell_key=cell_key(recipe.name, row_id, VERDICT, 0, requests_key(planned)),
            row_id=row_id, row_index=n, column_name=VERDICT, column_type=column.column_type,
            sample_index=0, value=json.dumps(value, ensure_ascii=False),
            status="rejected" if cause else "ok", cause=cause,
            request_key=planned[0].key, slot=judge_slot, model=model, prompt_tokens=None,
            completion_tokens=None, run_id=run_id,
        ))  # fmt: skip
    moved = insert_cells(con, cells)
    con.execute(_MARK, [JUDGE_STEP, moved])
    return moved


__all__ = [
    "JUDGE_STEP",
    "MIGRATE_SQL",
    "STEP",
    "cells_from_verdicts",
    "migrate_samples",
    "samples_to_cells",
]
