"""A dataset recipe's rows -> an export folder, through the datasets' own export path.

The rows are read from ``dataset_recipe_cells`` (the newest cell of each column, sample 0, of
the ``run`` version, as the ``recipe_<name>`` view shows them), one record per seed row. They
go through ``lib/exports`` as sessions and samples do: every
text scrubbed first, near-duplicate rows clustered (one kept per cluster), each row's split
its seed row's stored one (rows linked by a cluster share it), then the ``hf/rows`` config,
the ``openai/`` view, ``samples.parquet``, the card and the manifest.

A row with a cell a gate or a validation held back (``status = 'rejected'``), or with a
column that has no cell yet (an unanswered request, a cell not asked because one it reads was
held back), is held back: it stays in DuckDB with its cause and in ``samples.parquet`` with
``gate`` (the first such column, or ``incomplete``) and ``causes``, and is left out of ``hf/``
and ``openai/``.

The card holds the recipe as written and, per column, its role, slots, models, tokens and
the cells held back by cause.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from model_foundry.lib import settings, storage
from model_foundry.lib.errors import UserError
from model_foundry.lib.exports.card import CardSections
from model_foundry.lib.exports.frame import Preparation, export_records
from model_foundry.lib.exports.hygiene import ExportHygiene, scrubbed_record
from model_foundry.lib.exports.layouts import HYGIENE_FIELDS, MESSAGE, Layout, sample_openai
from model_foundry.lib.exports.prepare import ClusterIndex, Gates
from model_foundry.lib.exports.published import ExportOutcome, ExportTarget
from model_foundry.lib.exports.versions import MANIFEST, choose_version
from model_foundry.lib.recipes.card import recipe_section
from model_foundry.lib.recipes.spec import LLM_TYPES, Column, Recipe
from model_foundry.lib.recipes.templates import render
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS

CONFIG = "rows"
CELLS_VERSION = "run"
INCOMPLETE = "incomplete"
DEFAULT_TEST_SHARE = 0.05
_EMPTY_MESSAGE = {"reasoning": None, "tool_calls": [], "tool_call_id": None, "name": None,
                  "slot": None, "model": None}  # fmt: skip
# The export's own fields: a recipe column of one of these names could not be told apart.
RESERVED = ("id", "recipe", "version", "row_index", "messages", "slots", "models",
            "prompt_tokens", "completion_tokens", "cluster_id", "split", "gate", "causes",
            "kept", "dropped_by")  # fmt: skip
_ARROW = {"integer": pa.int64(), "number": pa.float64(), "boolean": pa.bool_()}


@dataclass(frozen=True)
class Cell:
    """The newest stored cell of one column of one row (sample 0)."""

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
    """The type of a column's own field (its sub-columns aside)."""
    if c.type == "sampler" and c.sampler == "uniform":
        return pa.int64() if c.integer else pa.float64()
    if c.type == "validation":
        return pa.bool_()
    return pa.string()


def check_exportable(recipe: Recipe) -> None:
    """One sentence when a column's name is one of the export's own fields."""
    for name, _ in column_fields(recipe):
        if name in RESERVED:
            raise recipe.error(
                f"columns.{name}",
                f"the name {name!r} is one of the export's own fields "
                f"({', '.join(RESERVED)}); rename the column to export the recipe",
            )


def recipe_layout(recipe: Recipe) -> Layout:
    """The ``rows`` config of ``recipe``: its columns typed, the chat and the lineage."""
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("recipe", pa.string()),
            ("version", pa.string()),
            ("row_index", pa.int64()),
            *column_fields(recipe),
            ("messages", pa.list_(MESSAGE)),
            ("slots", pa.list_(pa.string())),
            ("models", pa.list_(pa.string())),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            *HYGIENE_FIELDS,
        ]
    )
    return Layout(
        config=CONFIG,
        schema=schema,
        openai=sample_openai,
        task_categories=("text-generation",),
        tags=("synthetic", "dataset-recipe", "model-foundry"),
        audit=(("gate", pa.string()), ("causes", pa.string())),
        title="Dataset recipe rows",
        group="seed row",
    )


def chat_column(recipe: Recipe) -> Column | None:
    """The column whose prompt and answer make a row's ``messages``: the last ``llm_text``
    column, else the last LLM column; None without one."""
    text = [c for c in recipe.columns if c.type == "llm_text"]
    llm = [c for c in recipe.columns if c.type in LLM_TYPES]
    return (text or llm or [None])[-1]


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
    column: Column | None, values: Mapping[str, Any], answer: Cell | None
) -> list[dict[str, Any]]:
    """The chat column's request, rendered again from the row's values (the cells it read),
    and its answer with the slot and model that wrote it; empty when a value is missing."""
    if column is None or answer is None or column.name not in values:
        return []
    try:
        # A text column's request is its bare text: the user turn, with no system turn.
        turns = [("user", render(str(column.text or column.prompt), values))]
        if column.system:
            turns.insert(0, ("system", render(column.system, values)))
    except jinja2.TemplateError:  # a value it reads is missing: the row is held back anyway
        return []
    out = [{**_EMPTY_MESSAGE, "role": role, "content": text} for role, text in turns]
    out.append({**_EMPTY_MESSAGE, "role": "assistant", "content": _text(values[column.name]),
                "slot": answer.slot, "model": answer.model})  # fmt: skip
    return out


def held_back(recipe: Recipe, cells: Mapping[str, Cell]) -> tuple[str | None, str | None]:
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
    recipe: Recipe, row_id: str, row_index: int, cells: Mapping[str, Cell], chat: Column | None
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


class RecipeHygiene:
    """The installation's export hygiene, scrubbing every text a row holds: its columns,
    sub-columns, chat and causes (the other fields are the pipeline's own: ids, counts,
    slots and models)."""

    def __init__(self, inner: ExportHygiene, text_fields: Sequence[str]) -> None:
        self.inner = inner
        self.text_fields = [*text_fields, "causes"]

    def scrub(self, record: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, int]]:
        text = {k: record.get(k) for k in self.text_fields}
        text["messages"] = [{"content": m.get("content")} for m in record.get("messages") or []]
        return scrubbed_record(record, text, self.inner.scrub_value)

    def scrub_value(self, value: Any) -> tuple[Any, Mapping[str, int]]:
        return self.inner.scrub_value(value)

    def cluster_index(self) -> ClusterIndex:
        return self.inner.cluster_index()

    def splits(
        self,
        names: pa.Array,
        group_at: npt.NDArray[np.int64],
        clusters: npt.NDArray[np.int64] | None,
    ) -> tuple[npt.NDArray[np.int8], list[str], int]:
        return self.inner.splits(names, group_at, clusters)


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


def stored_rows(db_path: Path, recipe: Recipe) -> Iterator[tuple[str, int, dict[str, Cell]]]:
    """Each stored row of the recipe's ``run`` version: its id, index and newest cells."""
    with storage.connect(db_path) as con:
        cursor = con.execute(_NEWEST, [recipe.name, CELLS_VERSION])
        while rows := cursor.fetchmany(_FETCH):
            for row_id, row_index, cells in rows:
                yield row_id, int(row_index), {
                    c["column_name"]: Cell(
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
            "type": c.type,
            "role": c.role,
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


_CELLS_SEEN = (
    f"SELECT count(*), max(created_at)::VARCHAR FROM {DATASET_RECIPE_CELLS.name} "
    "WHERE recipe = ? AND version = ?"
)


def export_fingerprint(db_path: Path, recipe: Recipe, request: RecipeExport) -> str:
    """What an export's rows and card are made of, as a hash: the recipe as written, the
    license, the test share, and the ``run`` cells stored (how many and the newest's time:
    the cells table is append-only, so any new cell changes them). Recorded in the
    manifest; two exports with one fingerprint hold the same rows."""
    # Not read-only, as the export's other reads are not: DuckDB refuses a connection to a
    # file this process holds open under another configuration.
    with storage.connect(db_path) as con:
        found = con.execute(_CELLS_SEEN, [recipe.name, CELLS_VERSION]).fetchone()
    cells, newest = found or (0, None)
    given = {"recipe": dict(recipe.raw), "license": request.license,
             "test_share": request.test_share, "cells": int(cells), "newest": newest}  # fmt: skip
    text = json.dumps(given, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def exported_as(out_root: Path, name: str, fingerprint: str) -> str | None:
    """The finished version of ``name`` under ``out_root`` whose manifest records
    ``fingerprint``, or None: that version already holds the rows an export would write."""
    folder = out_root / name
    if not folder.is_dir():
        return None
    for manifest in sorted(folder.glob(f"*/{MANIFEST}")):
        try:
            recorded = json.loads(manifest.read_text(encoding="utf-8")).get("recipe") or {}
        except (OSError, json.JSONDecodeError):
            continue
        if recorded.get("fingerprint") == fingerprint:
            return manifest.parent.name
    return None


def unchanged_export(db_path: str | Path, recipe: Recipe, request: RecipeExport) -> str | None:
    """The finished version that already holds what exporting ``request`` would write (same
    fingerprint), or None, also when nothing is stored yet (the export then says why)."""
    db = Path(db_path)
    if request.version is not None or not count_rows(db, recipe):
        return None
    return exported_as(request.out_root, recipe.name, export_fingerprint(db, recipe, request))


@dataclass(frozen=True)
class RecipeExport:
    """What to export: the export root, the version (None: the UTC date, suffixed), the
    card's license and the share of new seed rows sent to test."""

    out_root: Path
    version: str | None = None
    license: str | None = None
    test_share: float = DEFAULT_TEST_SHARE
    run: str | None = None


def recipe_export_request(
    *,
    version: str | None = None,
    license: str | None = None,
    test_share: float = DEFAULT_TEST_SHARE,
    output_dir: str | Path | None = None,
    run: str | None = None,
) -> RecipeExport:
    """The export the CLI's flags or the asset's config ask for; ``output_dir`` unset is
    ``<data dir>/datasets``."""
    out_root = Path(output_dir) if output_dir else settings.data_dir() / "datasets"
    return RecipeExport(out_root, version, license, test_share, run)


def export_recipe(
    db_path: str | Path,
    recipe: Recipe,
    request: RecipeExport,
    hygiene: ExportHygiene,
) -> ExportOutcome:
    """Export ``recipe``'s stored rows to ``<out_root>/<recipe>/<version>/``; one sentence
    (:class:`UserError`) when there are none, a column's name is taken or the version is
    finished. ``hygiene`` is the installation's for the dataset named as the recipe."""
    db = Path(db_path)
    if not 0 < request.test_share < 1:
        raise UserError(f"test share {request.test_share} must be between 0 and 1")
    check_exportable(recipe)
    if not count_rows(db, recipe):
        raise UserError(
            f"recipe {recipe.name} has no generated rows in {db}: run "
            f"`model-foundry recipe run {recipe.name}` (or materialize recipe_{recipe.name}) "
            "first"
        )
    version = choose_version(request.out_root, recipe.name, request.version)
    # Taken before the rows are read: a cell stored meanwhile then makes the next export's
    # fingerprint differ (a new version), never match rows this export lacks.
    fingerprint = export_fingerprint(db, recipe, request)
    layout = recipe_layout(recipe)
    chat = chat_column(recipe)
    text_fields = [n for n, t in column_fields(recipe) if t == pa.string()]
    clean = RecipeHygiene(hygiene, text_fields)
    rows = stored_rows(db, recipe)
    records = (row_record(recipe, rid, at, cells, chat) for rid, at, cells in rows)
    causes = (*(c.name for c in recipe.columns), INCOMPLETE)
    preparation = Preparation(
        # A seed row is its own group; near-duplicate rows join their groups' split.
        group_of=lambda r: r["id"],
        filters=(),
        gates=Gates(causes, lambda r: r.get("gate")),
        text_of=lambda r: row_text(recipe, r),
    )
    figures = column_figures(db, recipe)
    # As JSON carries it: YAML may give dates, which the manifest could not hold.
    given = {"recipe": {"name": recipe.name, **dict(recipe.raw)}, "columns": figures}
    shown, _ = clean.scrub_value(json.loads(json.dumps(given, default=str)))
    made_by = {"run": request.run or f"model-foundry recipe export {recipe.name}"}
    target = ExportTarget(request.out_root, recipe.name, version, request.license)
    about = {
        "name": recipe.name,
        "cells_version": CELLS_VERSION,
        "chat_column": chat.name if chat is not None else None,
        "fingerprint": fingerprint,
        **shown,
    }
    return export_records(
        db, target, layout, records, clean, preparation, made_by,
        before_card=lambda f: setattr(f, "recipe", about),
        card=CardSections(sections=[recipe_section]),
    )  # fmt: skip


def nothing_kept_warning(outcome: ExportOutcome) -> str | None:
    """A sentence when rows were exported but none was kept: the views are empty, and
    ``load_dataset`` refuses a config without files."""
    f = outcome.figures
    if not f.records or sum(f.rows_by_split.values()):
        return None
    held = ", ".join(f"{k}: {v}" for k, v in f.held_back_by_gate.items() if v) or "none"
    return (
        f"no row of recipe {f.dataset} was kept: all {f.records} are only in samples.parquet "
        f"(held back by column: {held}; duplicates: {f.duplicates_removed})"
    )


def export_metadata(outcome: ExportOutcome) -> dict[str, Any]:
    """The export's figures as Dagster metadata: ids, counts and the folder only, never a
    row's text (seed rows and answers may hold the lab's tokens)."""
    f = outcome.figures
    return {
        "export_path": str(outcome.path),
        "version": f.version,
        "dagster/row_count": sum(f.rows_by_split.values()),
        "rows": f.records,
        "rows_by_split": f.rows_by_split,
        "held_back_by_gate": f.held_back_by_gate,
        "redactions_by_kind": f.redactions_by_kind,
        "clusters": f.clusters,
        "duplicates_removed": f.duplicates_removed,
        "split_joins": f.split_joins,
    }


__all__ = [
    "CELLS_VERSION",
    "CONFIG",
    "INCOMPLETE",
    "RESERVED",
    "Cell",
    "RecipeExport",
    "RecipeHygiene",
    "chat_column",
    "check_exportable",
    "column_fields",
    "column_figures",
    "export_fingerprint",
    "export_metadata",
    "export_recipe",
    "exported_as",
    "held_back",
    "nothing_kept_warning",
    "own_type",
    "recipe_export_request",
    "recipe_layout",
    "row_record",
    "row_text",
    "stored_rows",
    "unchanged_export",
]
