"""A recipe's stored rows as export records: the newest cell of each column (sample 0, of
the ``run`` version, as the ``recipe_<name>`` view shows them), one record per seed row, its
columns typed, its chat, its lineage and why it is held back; and the figures per column the
card shows.

A row with a cell a gate or a validation held back (``status = 'rejected'``), or with a
column that has no cell yet (an unanswered request, a cell blocked by a held-back one), is
held back: ``gate`` names the first such column (or ``incomplete``) and ``causes`` says why.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import jinja2
import pyarrow as pa

from model_foundry.lib import storage
from model_foundry.lib.recipes.columns.base import Column
from model_foundry.lib.recipes.columns.llm import LlmColumn
from model_foundry.lib.recipes.spec import Recipe
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS

CELLS_VERSION = "run"
INCOMPLETE = "incomplete"
_EMPTY_MESSAGE = {"reasoning": None, "tool_calls": [], "tool_call_id": None, "name": None,
                  "slot": None, "model": None}  # fmt: skip
# The export's own fields: a recipe column of one of these names could not be told apart.
RESERVED = ("id", "recipe", "version", "row_index", "messages", "slots", "models",
            "prompt_tokens", "completion_tokens", "cluster_id", "split", "gate", "causes",
            "kept", "dropped_by")  # fmt: skip
_ARROW = {"integer": pa.int64(), "number": pa.float64(), "boolean": pa.bool_()}


@dataclass(frozen=True)
class NewestCell:
    """The newest stored cell of one column of one row (sample 0), as an export reads it."""

    value: Any
    status: str
    cause: str | None
    slot: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def column_fields(recipe: Recipe) -> list[tuple[str, pa.DataType]]:
    """The typed fields of the recipe's columns, as in its ``recipe_<name>`` view: numbers
    of a uniform sampler, booleans of a validation, a structured or judge answer as JSON text
    and its typed sub-columns; anything else text (JSON text when it is not a string)."""
    out: list[tuple[str, pa.DataType]] = []
    for c in recipe.columns:
        out.append((c.name, own_type(c)))
        for prop, kind in c.sub_columns().items():
            out.append((f"{c.name}_{prop}", _ARROW.get(kind, pa.string())))
    return out


def own_type(c: Column) -> pa.DataType:
    """The type of a column's own field (its sub-columns aside; a structured value is JSON
    text)."""
    return _ARROW.get(c.value_type(), pa.string())


def check_exportable(recipe: Recipe) -> None:
    """One sentence when a column's name is one of the export's own fields."""
    for name, _ in column_fields(recipe):
        if name in RESERVED:
            raise recipe.error(
                f"columns.{name}",
                f"the name {name!r} is one of the export's own fields "
                f"({', '.join(RESERVED)}); rename the column to export the recipe",
            )


def chat_column(recipe: Recipe) -> LlmColumn | None:
    """The column whose prompt and answer make a row's ``messages``: the last ``llm_text``
    column, else the last LLM column; None without one."""
    ranked = [(c.chat_rank, i) for i, c in enumerate(recipe.columns) if c.chat_rank]
    return cast("LlmColumn", recipe.columns[max(ranked)[1]]) if ranked else None


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _typed(value: Any, kind: pa.DataType) -> Any:
    """``value`` as the field's type, or None when it is not one (a held-back answer)."""
    if kind == pa.string():
        return _text(value)
    if kind == pa.bool_():
        return value if isinstance(value, bool) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if kind == pa.int64():
        return int(value) if float(value).is_integer() else None
    return float(value)


def _messages(
    column: LlmColumn | None, values: Mapping[str, Any], answer: NewestCell | None
) -> list[dict[str, Any]]:
    """The chat column's request, rendered again from the row's values (the cells it read),
    and its answer with the slot and model that wrote it; empty when a value is missing."""
    if column is None or answer is None or column.name not in values:
        return []
    try:
        turns = column.chat_turns(values)
    except jinja2.TemplateError:  # a value it reads is missing: the row is held back anyway
        return []
    out = [{**_EMPTY_MESSAGE, "role": role, "content": text} for role, text in turns]
    out.append({**_EMPTY_MESSAGE, "role": "assistant", "content": _text(values[column.name]),
                "slot": answer.slot, "model": answer.model})  # fmt: skip
    return out


def held_back(recipe: Recipe, cells: Mapping[str, NewestCell]) -> tuple[str | None, str | None]:
    """Why a row is held back: the first column (in the recipe's order) whose cell was
    rejected, else ``incomplete`` when a column has no cell; and every cause, as text."""
    causes = []
    gate = None
    for c in recipe.columns:
        cell = cells.get(c.name)
        if cell is None:
            causes.append(f"{c.name}: no cell yet")
            continue
        if cell.status != "ok":
            gate = gate or c.name
            causes.append(f"{c.name}: {cell.cause or cell.status}")
    if gate is None and causes:
        gate = INCOMPLETE
    return gate, "; ".join(causes) or None


def row_record(
    recipe: Recipe,
    row_id: str,
    row_index: int,
    cells: Mapping[str, NewestCell],
    chat: LlmColumn | None,
) -> dict[str, Any]:
    """One row as an export record (see :func:`recipe_layout`), before hygiene."""
    values = {name: cell.value for name, cell in cells.items() if cell.status == "ok"}
    record: dict[str, Any] = {
        "id": row_id,
        "recipe": recipe.name,
        "version": CELLS_VERSION,
        "row_index": row_index,
    }
    for c in recipe.columns:
        cell = cells.get(c.name)
        value = cell.value if cell is not None else None
        record[c.name] = _typed(value, own_type(c))
        for prop, kind in c.sub_columns().items():
            picked = value.get(prop) if isinstance(value, dict) else None
            record[f"{c.name}_{prop}"] = _typed(picked, _ARROW.get(kind, pa.string()))
    llm = [cells[c.name] for c in recipe.columns if c.is_llm and c.name in cells]
    record["messages"] = _messages(chat, values, cells.get(chat.name) if chat else None)
    record["slots"] = sorted({x.slot for x in llm if x.slot})
    record["models"] = sorted({x.model for x in llm if x.model})
    record["prompt_tokens"] = sum(x.prompt_tokens or 0 for x in llm)
    record["completion_tokens"] = sum(x.completion_tokens or 0 for x in llm)
    record["gate"], record["causes"] = held_back(recipe, cells)
    return record


def row_text(recipe: Recipe, record: Mapping[str, Any]) -> str:
    """What near-duplicate rows are compared on: every text column (seed fields, expressions,
    answers, structured answers as JSON), in the recipe's order."""
    parts = []
    for c in recipe.columns:
        value = record.get(c.name)
        if isinstance(value, str):
            parts.append(value)
    return "\n".join(parts)


_CELL = (
    "{'column_name': column_name, 'value': value::VARCHAR, 'status': status, 'cause': cause, "
    "'slot': slot, 'model': model, 'prompt_tokens': prompt_tokens, "
    "'completion_tokens': completion_tokens}"
)
_NEWEST = f"""
WITH newest AS (
    SELECT * FROM {DATASET_RECIPE_CELLS.name}
    WHERE recipe = ? AND version = ? AND sample_index = 0
    QUALIFY row_number() OVER (PARTITION BY row_id, column_name ORDER BY created_at DESC) = 1
)
SELECT row_id, min(row_index) AS row_index, list({_CELL}) AS cells
FROM newest GROUP BY row_id ORDER BY row_index, row_id
"""
_FETCH = 500


def stored_rows(db_path: Path, recipe: Recipe) -> Iterator[tuple[str, int, dict[str, NewestCell]]]:
    """Each stored row of the recipe's ``run`` version: its id, index and newest cells."""
    with storage.connect(db_path) as con:
        cursor = con.execute(_NEWEST, [recipe.name, CELLS_VERSION])
        while rows := cursor.fetchmany(_FETCH):
            for row_id, row_index, cells in rows:
                yield row_id, int(row_index), {
                    c["column_name"]: NewestCell(
                        json.loads(c["value"]) if c["value"] is not None else None,
                        c["status"], c["cause"], c["slot"], c["model"], c["prompt_tokens"],
                        c["completion_tokens"],
                    )
                    for c in cells
                }  # fmt: skip


_COLUMNS = f"""
WITH newest AS (
    SELECT * FROM {DATASET_RECIPE_CELLS.name} WHERE recipe = ? AND version = ?
    QUALIFY row_number() OVER (
        PARTITION BY row_id, column_name, sample_index ORDER BY created_at DESC
    ) = 1
)
SELECT column_name,
       list(DISTINCT slot ORDER BY slot) FILTER (WHERE slot IS NOT NULL) AS slots,
       list(DISTINCT model ORDER BY model) FILTER (WHERE model IS NOT NULL) AS models,
       coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
       coalesce(sum(completion_tokens), 0) AS completion_tokens,
       count(*) FILTER (WHERE status = 'ok') AS ok,
       count(*) FILTER (WHERE status <> 'ok') AS rejected
FROM newest GROUP BY column_name
"""
_CAUSES = f"""
WITH newest AS (
    SELECT * FROM {DATASET_RECIPE_CELLS.name} WHERE recipe = ? AND version = ?
    QUALIFY row_number() OVER (
        PARTITION BY row_id, column_name, sample_index ORDER BY created_at DESC
    ) = 1
)
SELECT column_name, split_part(cause, ' (', 1) AS cause, count(*) AS n
FROM newest WHERE status <> 'ok' GROUP BY 1, 2 ORDER BY 1, 2
"""


def column_figures(db_path: Path, recipe: Recipe) -> dict[str, dict[str, Any]]:
    """Per column of the recipe: type, role, slots, models, tokens (every sample), cells ok
    and held back, held back by cause (the cause's words before its details)."""
    with storage.connect(db_path) as con:
        cursor = con.execute(_COLUMNS, [recipe.name, CELLS_VERSION])
        names = [d[0] for d in cursor.description]
        found = {r[0]: dict(zip(names, r, strict=True)) for r in cursor.fetchall()}
        causes = con.execute(_CAUSES, [recipe.name, CELLS_VERSION]).fetchall()
    out: dict[str, dict[str, Any]] = {}
    for c in recipe.columns:
        got = found.get(c.name, {})
        out[c.name] = {
            "type": c.column_type,
            "role": c.slot_role(),
            "slots": got.get("slots") or [],
            "models": got.get("models") or [],
            "prompt_tokens": int(got.get("prompt_tokens") or 0),
            "completion_tokens": int(got.get("completion_tokens") or 0),
            "ok": int(got.get("ok") or 0),
            "rejected": int(got.get("rejected") or 0),
            "rejected_by_cause": {cause: n for name, cause, n in causes if name == c.name},
        }
    return out


_ROW_COUNT = (
    f"SELECT count(DISTINCT row_id) FROM {DATASET_RECIPE_CELLS.name} "
    "WHERE recipe = ? AND version = ?"
)


def count_rows(db_path: Path, recipe: Recipe) -> int:
    """How many rows the recipe's ``run`` version holds (0 without the file)."""
    if not db_path.exists():
        return 0
    with storage.connect(db_path) as con:
        (n,) = con.execute(_ROW_COUNT, [recipe.name, CELLS_VERSION]).fetchone() or (0,)
    return int(n)


__all__ = [
    "CELLS_VERSION",
    "INCOMPLETE",
    "RESERVED",
    "NewestCell",
    "chat_column",
    "check_exportable",
    "column_fields",
    "column_figures",
    "count_rows",
    "held_back",
    "own_type",
    "row_record",
    "row_text",
    "stored_rows",
]
