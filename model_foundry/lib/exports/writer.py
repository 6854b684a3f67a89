"""Writing an export folder: every view of one set of records, then the card and manifest.

``<out_root>/<name>/<version>/`` holds ``hf/<config>/<split>.parquet``, ``openai/<split>
.jsonl``, ``samples.parquet`` (every record, kept or not), ``README.md`` (the card) and
``manifest.json``. The folder is written beside its place and renamed there whole, so a
version is either finished or absent (``versions.py``); an unfinished leftover of the same
version is replaced.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.parquet as pq

from model_foundry.lib.exports.card import NO_SECTIONS, CardSections, ExportFigures, card_text
from model_foundry.lib.exports.layouts import CONTAMINATION, Layout
from model_foundry.lib.exports.names import export_dir
from model_foundry.lib.exports.versions import MANIFEST, FinishedVersionError

SPLITS = ("train", "test")
# samples.parquet's columns beyond the layout's: why a record is not in the other views.
_KEPT = [("kept", pa.bool_()), ("dropped_by", pa.string()), ("contamination", CONTAMINATION)]


class _Views:
    """The open files of a folder being written, fed a batch of records at a time."""

    def __init__(self, staging: Path, layout: Layout) -> None:
        self.staging = staging
        self.layout = layout
        self.everything = pa.schema([*layout.spooled, *[pa.field(n, t) for n, t in _KEPT]])
        (staging / "hf" / layout.config).mkdir(parents=True)
        (staging / "openai").mkdir()
        self.samples = pq.ParquetWriter(staging / "samples.parquet", self.everything)
        self.hf: dict[str, pq.ParquetWriter] = {}
        self.openai: dict[str, TextIO] = {}
        self.rows = dict.fromkeys(SPLITS, 0)

    def _split_files(self, split: str) -> tuple[pq.ParquetWriter, TextIO]:
        if split not in self.hf:
            path = self.staging / "hf" / self.layout.config / f"{split}.parquet"
            self.hf[split] = pq.ParquetWriter(path, self.layout.schema)
            self.openai[split] = (self.staging / "openai" / f"{split}.jsonl").open(
                "w", encoding="utf-8"
            )
        return self.hf[split], self.openai[split]

    def add(self, batch: Sequence[dict[str, Any]]) -> None:
        self.samples.write_table(pa.Table.from_pylist(list(batch), schema=self.everything))
        for split in SPLITS:
            rows = [r for r in batch if r["kept"] and r["split"] == split]
            if not rows:
                continue
            hf, openai = self._split_files(split)
            hf.write_table(pa.Table.from_pylist(rows, schema=self.layout.schema))
            for row in rows:
                line = json.dumps(self.layout.openai(row), ensure_ascii=False) + "\n"
                openai.write(line)
            self.rows[split] += len(rows)

    def close(self) -> dict[str, Any]:
        """Close every file; the files written, by view and split."""
        self.samples.close()
        for split in self.hf:
            self.hf[split].close()
            self.openai[split].close()
        return {
            "hf": {s: f"hf/{self.layout.config}/{s}.parquet" for s in self.hf},
            "openai": {s: f"openai/{s}.jsonl" for s in self.openai},
            "samples": "samples.parquet",
            "card": "README.md",
        }


def _write_also(
    staging: Path, layout: Layout, records: Iterable[dict[str, Any]]
) -> tuple[dict[str, int], dict[str, str]]:
    """Another config's records (each with its ``split``): ``hf/<config>/<split>.parquet``
    and ``openai/<config>/<split>.jsonl``; rows and files per split."""
    hf: dict[str, pq.ParquetWriter] = {}
    lines: dict[str, TextIO] = {}
    rows: dict[str, int] = {}
    (staging / "hf" / layout.config).mkdir(parents=True, exist_ok=True)
    (staging / "openai" / layout.config).mkdir(parents=True, exist_ok=True)
    try:
        for batch in batched(records):
            for split in SPLITS:
                chosen = [r for r in batch if r["split"] == split]
                if not chosen:
                    continue
                if split not in hf:
                    path = staging / "hf" / layout.config / f"{split}.parquet"
                    hf[split] = pq.ParquetWriter(path, layout.schema)
                    lines[split] = (staging / "openai" / layout.config / f"{split}.jsonl").open(
                        "w", encoding="utf-8"
                    )
                hf[split].write_table(pa.Table.from_pylist(chosen, schema=layout.schema))
                for r in chosen:
                    lines[split].write(json.dumps(layout.openai(r), ensure_ascii=False) + "\n")
                rows[split] = rows.get(split, 0) + len(chosen)
    finally:
        for split in hf:
            hf[split].close()
            lines[split].close()
    return rows, {s: f"hf/{layout.config}/{s}.parquet" for s in rows}


def write_export(
    out_root: Path,
    layout: Layout,
    batches: Iterable[Sequence[dict[str, Any]]],
    figures: ExportFigures,
    before_card: Callable[[ExportFigures], None] | None = None,
    also: Sequence[tuple[Layout, Callable[[], Iterable[dict[str, Any]]]]] = (),
    card: CardSections = NO_SECTIONS,
) -> Path:
    """Write the folder for the records of ``batches`` (each with ``split``, ``cluster_id``,
    ``kept`` and ``dropped_by``), one batch in memory at a time; ``figures`` gets the rows per
    split and the files, and ``before_card`` may add what only the records showed. ``also``
    adds configs of other records (a layout and what yields its records, called after the
    main records are written: their splits are stored by then); ``card`` is the caller's part
    of the card. Returns the folder."""
    final = export_dir(out_root, figures.dataset, figures.version)
    if (final / MANIFEST).is_file():
        raise FinishedVersionError(
            f"dataset {figures.dataset} version {figures.version} is already exported to {final}"
        )
    staging = final.parent / f".{final.name}.{uuid.uuid4().hex[:8]}.partial"
    staging.mkdir(parents=True)
    try:
        views = _Views(staging, layout)
        try:
            for batch in batches:
                views.add(batch)
        finally:
            figures.files = views.close()
        figures.rows_by_split = dict(views.rows)
        for other, records in also:
            rows, files = _write_also(staging, other, records())
            figures.configs[other.config] = rows
            figures.files.setdefault("configs", {})[other.config] = files
        if before_card is not None:
            before_card(figures)
        (staging / "README.md").write_text(card_text(layout, figures, card), encoding="utf-8")
        manifest = json.dumps({"finished": True, **asdict(figures)}, indent=2, ensure_ascii=False)
        (staging / MANIFEST).write_text(manifest, encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)  # an unfinished leftover: no manifest, so never published
        staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def batched(records: Iterable[dict[str, Any]], size: int = 1000) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


__all__ = ["SPLITS", "batched", "write_export"]
