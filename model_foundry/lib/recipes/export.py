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

import functools
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from model_foundry.lib.exports.workers import Then
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.recipes.card import recipe_section
from model_foundry.lib.recipes.records import (
    CELLS_VERSION,
    INCOMPLETE,
    chat_column,
    check_exportable,
    column_fields,
    column_figures,
    count_rows,
    row_record,
    row_text,
    stored_rows,
)
from model_foundry.lib.recipes.spec import Recipe
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS

CONFIG = "rows"
DEFAULT_TEST_SHARE = 0.05


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


def scrub_recipe_record(
    text_fields: tuple[str, ...], scrubber: RecordScrubber, record: dict[str, Any]
) -> tuple[dict[str, Any], Mapping[str, int]]:
    """A recipe row with ``text_fields`` and its chat's contents scrubbed."""
    text = {k: record.get(k) for k in text_fields}
    text["messages"] = [{"content": m.get("content")} for m in record.get("messages") or []]
    return scrubbed_record(record, text, scrubber.scrub)


class RecipeHygiene:
    """The installation's export hygiene, scrubbing every text a row holds: its columns,
    sub-columns, chat and causes (the other fields are the pipeline's own: ids, counts,
    slots and models)."""

    def __init__(self, inner: ExportHygiene, text_fields: Sequence[str]) -> None:
        self.inner = inner
        self.text_fields = [*text_fields, "causes"]

    def scrub(self, record: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, int]]:
        return scrub_recipe_record(tuple(self.text_fields), self.inner.scrubber, record)

    def scrub_all(
        self, records: Iterable[dict[str, Any]], then: Then | None = None
    ) -> Iterator[tuple[dict[str, Any], Mapping[str, int]]]:
        scrub = functools.partial(scrub_recipe_record, tuple(self.text_fields))
        return self.inner.scrub_all(records, scrub, then=then)

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
    "CONFIG",
    "RecipeExport",
    "RecipeHygiene",
    "export_fingerprint",
    "export_metadata",
    "export_recipe",
    "exported_as",
    "nothing_kept_warning",
    "recipe_export_request",
    "recipe_layout",
    "unchanged_export",
]
