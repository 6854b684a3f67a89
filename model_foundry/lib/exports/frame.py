"""One export, start to finish: records spooled and prepared, then written as a folder.

Every kind of record (sessions, fan-out samples, a dataset recipe's rows) takes this path:
the records are scrubbed, flagged, checked by the quality gates and against the lab's
evaluation sets, clustered and split into a
spool beside the version's folder (``prepare.py``), then written with their card and
manifest and recorded in ``dataset_exports`` (``published.py``). The spool is removed
whatever happens. What differs is the caller's: its records, their layout, how they are
prepared, and its own sections of the card.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_foundry.lib.decontamination.match import decontaminator
from model_foundry.lib.exports.card import NO_SECTIONS, CardSections, ExportFigures
from model_foundry.lib.exports.layouts import Layout
from model_foundry.lib.exports.names import export_dir
from model_foundry.lib.exports.prepare import SESSION_FILTERS, Gates, Hygiene, prepare, varying_text
from model_foundry.lib.exports.published import ExportOutcome, ExportTarget, write_prepared


@dataclass(frozen=True)
class Preparation:
    """How the records are prepared (see :func:`prepare.prepare`): each one's split group,
    whether near duplicates are removed, the filters, the quality gates and the text near
    duplicates are compared on."""

    group_of: Callable[[dict[str, Any]], str]
    deduplicate: bool = True
    filters: Sequence[str] = SESSION_FILTERS
    gates: Gates | None = None
    text_of: Callable[[dict[str, Any]], str] = varying_text


def export_records(
    db_path: str | Path,
    target: ExportTarget,
    layout: Layout,
    records: Iterable[dict[str, Any]],
    hygiene: Hygiene,
    preparation: Preparation,
    made_by: Mapping[str, Any],
    *,
    also: Sequence[tuple[Layout, Callable[[], Iterable[dict[str, Any]]]]] = (),
    before_card: Callable[[ExportFigures], None] | None = None,
    card: CardSections = NO_SECTIONS,
) -> ExportOutcome:
    """Export ``records`` to ``target``'s folder as ``layout`` says. ``also`` adds configs of
    other records, ``before_card`` the caller's figures once every config is written, and
    ``card`` the caller's own parts of the card.

    Every record is checked against the eval sets of ``MODEL_FOUNDRY_EVAL_SETS``, their
    indexes loaded (or built) first: a file that cannot be used stops the export before
    anything is written (``EvalSetError``)."""
    checker = decontaminator()
    spool_dir = export_dir(target.out_root, target.name, target.version).parent
    spool_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".spool-", dir=spool_dir) as tmp:
        prepared = prepare(
            records,
            hygiene,
            Path(tmp) / "records.parquet",
            layout.spooled,
            group_of=preparation.group_of,
            deduplicate=preparation.deduplicate,
            filters=preparation.filters,
            gates=preparation.gates,
            text_of=preparation.text_of,
            decontamination=checker,
        )
        return write_prepared(
            db_path, target, layout, prepared, made_by,
            also=also, before_card=before_card, card=card,
        )  # fmt: skip


__all__ = ["Preparation", "export_records"]
