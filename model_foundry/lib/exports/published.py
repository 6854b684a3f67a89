"""A prepared export written out: its figures, the folder and its ``dataset_exports`` row.

Every export ends here (through ``frame.export_records``): the figures come from
hygiene (``prepare.py``) and from the kept records as they pass to the writer, so the card
and the manifest say the same.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from model_foundry.lib import storage
from model_foundry.lib.exports.card import NO_SECTIONS, CardSections, ExportFigures
from model_foundry.lib.exports.layouts import Layout
from model_foundry.lib.exports.prepare import Prepared, varying_text
from model_foundry.lib.exports.writer import write_export
from model_foundry.lib.gates.script import languages
from model_foundry.lib.tables.datasets import DATASET_EXPORTS, DatasetExportRow


@dataclass(frozen=True)
class ExportTarget:
    """Where an export goes and under what license (None: ``unknown``, never guessed)."""

    out_root: Path
    name: str
    version: str
    license: str | None = None


@dataclass(frozen=True)
class ExportOutcome:
    """The folder written, its figures, and what its records' split groups are (the layout's
    ``group``: a session, a prompt, a seed row)."""

    path: Path
    figures: ExportFigures
    group: str


def foundry_version() -> str:
    try:
        return metadata.version("model-foundry")
    except metadata.PackageNotFoundError:
        return "unknown"


class _Kept:
    """The kept records' sessions (or prompts), models, slots and some text, as they pass.

    Sessions are counted by a 64-bit hash each in an array, not a set of their ids: 8 bytes
    a session instead of a string object and a set slot each (a collision among a million
    has odds near 1e-8)."""

    def __init__(self) -> None:
        self.sessions = array("q")
        self.models: set[str] = set()
        self.slots: set[str] = set()
        self.texts: list[str] = []

    def note(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for r in batch:
            if not r["kept"]:
                continue
            self.sessions.append(hash(r.get("correlation_id") or r.get("prompt_id") or r["id"]))
            self.models.update(r.get("models") or ([r["model"]] if r.get("model") else []))
            self.slots.update(r.get("slots") or ([r["slot"]] if r.get("slot") else []))
            if len(self.texts) < 2000:
                self.texts.append(varying_text(r))
        return batch

    def fill(self, figures: ExportFigures) -> None:
        figures.sessions = int(np.unique(np.frombuffer(self.sessions, dtype=np.int64)).size)
        figures.models = sorted(self.models)
        figures.slots = sorted(self.slots)
        figures.languages = languages(self.texts)


def write_prepared(
    db_path: str | Path,
    target: ExportTarget,
    layout: Layout,
    prepared: Prepared,
    made_by: Mapping[str, Any],
    *,
    also: Sequence[tuple[Layout, Callable[[], Iterable[dict[str, Any]]]]] = (),
    before_card: Callable[[ExportFigures], None] | None = None,
    card: CardSections = NO_SECTIONS,
) -> ExportOutcome:
    """Write ``prepared`` to its folder, with the configs ``also`` gives and the caller's
    ``card`` sections, and record it in ``dataset_exports``. ``before_card`` adds the
    caller's figures once every config is written."""
    kept = _Kept()

    def filled(f: ExportFigures) -> None:
        kept.fill(f)
        if before_card is not None:
            before_card(f)

    figures = ExportFigures(
        dataset=target.name,
        version=target.version,
        kind=layout.config,
        rows_by_split={},
        records=prepared.records,
        sessions=0,
        models=[],
        slots=[],
        redactions_by_kind=prepared.redactions_by_kind,
        duplicates_removed=prepared.duplicates_removed,
        clusters=prepared.clusters,
        removed_by_filter=prepared.removed_by_filter,
        held_back_by_gate=prepared.held_back_by_gate,
        decontamination=prepared.decontamination,
        split_joins=prepared.split_joins,
        license=target.license or "unknown",
        languages=[],
        made_by={
            "version": foundry_version(),
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            **made_by,
        },
    )
    batches = (kept.note(b) for b in prepared.batches())
    # The card is written after the last batch: the kept records' figures are known by then.
    path = write_export(
        target.out_root, layout, batches, figures, before_card=filled, also=also, card=card
    )
    row = DatasetExportRow(
        dataset=target.name, version=target.version, path=str(path), rows=prepared.records,
        jsonl_rows=sum(figures.rows_by_split.values()),
    )  # fmt: skip
    sql = DATASET_EXPORTS.insert_sql("replace")
    storage.run_in_transaction(db_path, lambda con: con.execute(sql, DATASET_EXPORTS.values(row)))
    return ExportOutcome(path, figures, layout.group)


def figures_line(outcome: ExportOutcome) -> str:
    f = outcome.figures
    splits = ", ".join(f"{s} {n}" for s, n in f.rows_by_split.items())
    redactions = sum(f.redactions_by_kind.values())
    return (
        f"exported {f.dataset}/{f.version} to {outcome.path}: {splits} records from "
        f"{f.sessions} {outcome.group}s; {redactions} redactions, "
        f"{f.duplicates_removed} duplicates removed in {f.clusters} clusters, filters removed "
        f"{sum(f.removed_by_filter.values())}"
        + (f", gates held back {sum(f.held_back_by_gate.values())}" if f.held_back_by_gate else "")
        + (
            f", {_contaminated(f.decontamination)} held back as contaminated"
            if f.decontamination is not None
            else ""
        )
    )


def _contaminated(found: Mapping[str, Any]) -> int:
    return sum(s["rows_held_back"] for s in found["eval_sets"].values())


def empty_split_warning(outcome: ExportOutcome, test_share: float) -> str | None:
    """A sentence when an export with records left a split empty, e.g. ``test split is empty:
    12 records from 3 sessions are too few for test_share 0.1``.

    Splits are drawn per session (per prompt for a collection) by a stable hash, so a small
    export can leave one empty; the counts alone (``test: 0``) do not tell a person why."""
    figures = outcome.figures
    total = sum(figures.rows_by_split.values())
    if not total:
        return None
    empty = [s for s in ("train", "test") if not figures.rows_by_split.get(s)]
    if not empty:
        return None
    plural = "s" if figures.sessions != 1 else ""
    groups = f" from {figures.sessions:,} {outcome.group}{plural}" if figures.sessions else ""
    return (
        f"{empty[0]} split is empty: {total:,} records{groups} are too few for "
        f"test_share {test_share:g}"
    )


__all__ = [
    "ExportOutcome",
    "ExportTarget",
    "empty_split_warning",
    "figures_line",
    "foundry_version",
    "write_prepared",
]
