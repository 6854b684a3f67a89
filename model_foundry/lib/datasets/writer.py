"""Writing an export folder: every view of one set of records, then the card and manifest.

``<out_root>/<name>/<version>/`` holds ``hf/<config>/<split>.parquet``, ``openai/<split>
.jsonl``, ``chat.jsonl`` (the openai view, every split in one file), ``samples.parquet``
(every record, kept or not), ``README.md`` (the card) and ``manifest.json``. The folder is
written beside its place and renamed there whole, so a version is either finished or absent
(``versions.py``); an unfinished leftover of the same version is replaced.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from model_foundry.lib.datasets.card import ExportFigures, card_text
from model_foundry.lib.datasets.export import export_dir
from model_foundry.lib.datasets.layouts import Layout
from model_foundry.lib.datasets.versions import MANIFEST, FinishedVersionError

SPLITS = ("train", "test")
# samples.parquet's columns beyond the layout's: why a record is not in the other views.
_KEPT = [("kept", pa.bool_()), ("dropped_by", pa.string())]


def _jsonl(path: Path, lines: Sequence[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def write_export(
    out_root: Path,
    layout: Layout,
    records: Sequence[dict[str, Any]],
    figures: ExportFigures,
) -> Path:
    """Write the folder for ``records`` (each with ``split``, ``cluster_id``, ``kept`` and
    ``dropped_by``); the figures' ``files`` are filled in. Returns the folder."""
    final = export_dir(out_root, figures.dataset, figures.version)
    if (final / MANIFEST).is_file():
        raise FinishedVersionError(
            f"dataset {figures.dataset} version {figures.version} is finished"
        )
    staging = final.parent / f".{final.name}.{uuid.uuid4().hex[:8]}.partial"
    staging.mkdir(parents=True)
    try:
        kept = [r for r in records if r["kept"]]
        files: dict[str, Any] = {"hf": {}, "openai": {}}
        (staging / "hf" / layout.config).mkdir(parents=True)
        (staging / "openai").mkdir()
        chat: list[dict[str, Any]] = []
        for split in SPLITS:
            rows = [r for r in kept if r["split"] == split]
            figures.rows_by_split[split] = len(rows)
            if not rows:
                continue
            hf_path = f"hf/{layout.config}/{split}.parquet"
            pq.write_table(pa.Table.from_pylist(rows, schema=layout.schema), staging / hf_path)
            lines = [layout.openai(r) for r in rows]
            _jsonl(staging / "openai" / f"{split}.jsonl", lines)
            chat += lines
            files["hf"][split] = hf_path
            files["openai"][split] = f"openai/{split}.jsonl"
        _jsonl(staging / "chat.jsonl", chat)
        everything = pa.schema([*layout.schema, *[pa.field(n, t) for n, t in _KEPT]])
        pq.write_table(
            pa.Table.from_pylist(list(records), schema=everything), staging / "samples.parquet"
        )
        files.update(chat="chat.jsonl", samples="samples.parquet", card="README.md")
        figures.files = files
        (staging / "README.md").write_text(card_text(layout, figures), encoding="utf-8")
        manifest = {"finished": True, **asdict(figures)}
        (staging / MANIFEST).write_text(
            json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8"
        )
        if final.exists():
            shutil.rmtree(final)  # an unfinished leftover: no manifest, so never published
        staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


__all__ = ["SPLITS", "write_export"]
