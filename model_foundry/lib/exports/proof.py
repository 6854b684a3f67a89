"""What an export folder proves once written: no secret in its views, the share of records
it held back, its columns, and a few of its records, kept and held back.

Read from the finished folder, not from the export's own figures: the check of a folder
must see what a trainer will read (a file changed or added after the export included).
``defs/export_checks.py`` turns these into Dagster's blocking asset checks and the assets'
metadata.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from model_foundry.lib.exports.prepare import varying_text
from model_foundry.lib.hygiene.record import RecordScrubber

# The views a trainer reads (``writer.py``): every config's Parquet files and JSONL lines.
VIEW_GLOBS = ("hf/**/*.parquet", "openai/**/*.jsonl")
SAMPLES = "samples.parquet"
# What the PII rules replace (``lib/hygiene/pii.py``): personal data, removed or hashed by
# the export's scrub, but no credential; the secret check does not count it.
PII_KINDS = frozenset({"email", "ipv4", "ipv6", "home_path"})
# A marker the scrubber wrote, and the word a rescan reads in its place: the rules take
# "REDACTED" for a placeholder wherever it stands, while a marker's own text can look like a
# secret to them (``https://[REDACTED:url_token]@host`` reads as a user and a password).
_MARKER = re.compile(r"\[REDACTED:[^\]\s]*\]")
_IN_PLACE_OF_MARKER = "REDACTED"
_BATCH = 1000
# Where a rescan's finds are shown: at most this many places (file and row, never the value).
MAX_PLACES = 20


@dataclass
class SecretScan:
    """Secrets the scrubber's rules still find in an export's views, by kind, and where."""

    files: int = 0
    rows: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    places: list[str] = field(default_factory=list)

    @property
    def found(self) -> int:
        return sum(self.by_kind.values())


def view_files(folder: Path) -> list[Path]:
    return sorted({p for pattern in VIEW_GLOBS for p in folder.glob(pattern) if p.is_file()})


def _view_rows(path: Path) -> Iterator[Any]:
    if path.suffix == ".parquet":
        for batch in pq.ParquetFile(path).iter_batches(batch_size=_BATCH):
            yield from batch.to_pylist()
        return
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError:
                yield line  # not JSON, but still text a trainer may read: scanned as it is


def unmarked(value: Any) -> Any:
    """``value`` with every marker in every string (JSON inside a string too) read as the
    placeholder word: what a rescan scrubs, so the scrubber's own markers are no find."""
    if isinstance(value, str):
        return _MARKER.sub(_IN_PLACE_OF_MARKER, value)
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unmarked(v) for v in value]
    return value


def scan_secrets(folder: Path, scrubber: RecordScrubber) -> SecretScan:
    """Every row of every view of ``folder``, every column, scrubbed again by ``scrubber``:
    what its secret rules would still replace (PII kinds and the markers, the scrubber's own
    work, are not counted: see :func:`unmarked`). A clean export's text was scrubbed by the
    same rules, so a find is a value that did not pass through them: written later, or in a
    column the export takes as the pipeline's own (an id from a prompt file)."""
    scan = SecretScan()
    found: Counter[str] = Counter()
    for path in view_files(folder):
        scan.files += 1
        where = path.relative_to(folder).as_posix()
        for n, row in enumerate(_view_rows(path)):
            scan.rows += 1
            _, counts = scrubber.scrub(unmarked(row))
            secrets = {k: v for k, v in counts.items() if k not in PII_KINDS and v}
            if secrets:
                found.update(secrets)
                if len(scan.places) < MAX_PLACES:
                    scan.places.append(f"{where} row {n + 1}: {', '.join(sorted(secrets))}")
    scan.by_kind = dict(sorted(found.items()))
    return scan


@dataclass(frozen=True)
class HeldBack:
    """An export's records (``samples.parquet``) and those left out of its views, by cause
    (``dropped_by``: ``duplicate``, ``filter:<name>``, ``gate:<cause>``)."""

    records: int
    by_cause: dict[str, int]

    @property
    def held(self) -> int:
        return sum(self.by_cause.values())

    @property
    def share(self) -> float:
        return self.held / self.records if self.records else 0.0


def held_back(folder: Path) -> HeldBack:
    table = pq.read_table(folder / SAMPLES, columns=["dropped_by"])
    causes = Counter(c for c in table.column("dropped_by").to_pylist() if c is not None)
    return HeldBack(table.num_rows, dict(sorted(causes.items())))


def _type_name(t: pa.DataType) -> str:
    """A column's type as a user reads it: ``list<struct>`` rather than every field."""
    if pa.types.is_struct(t):
        return "struct"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"list<{_type_name(t.value_type)}>"
    return str(t)


def columns(folder: Path) -> list[tuple[str, str]]:
    """The main config's columns and types, from its first ``hf/`` file (every file has the
    same schema); with no row kept, ``samples.parquet``'s without its own columns (``kept``,
    ``dropped_by``, ``contamination``)."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    files = [folder / f for f in (manifest.get("files", {}).get("hf") or {}).values()]
    if files:
        schema = pq.read_schema(files[0])
        return [(f.name, _type_name(f.type)) for f in schema]
    schema = pq.read_schema(folder / SAMPLES)
    own = ("kept", "dropped_by", "contamination")
    return [(f.name, _type_name(f.type)) for f in schema if f.name not in own]


@dataclass(frozen=True)
class PreviewRow:
    id: str
    split: str
    cause: str  # ``kept``, or why the record is not in the views (``dropped_by``)
    text: str  # the record's turns (``prepare.varying_text``), raw: shown only when scrubbed


def preview(folder: Path, kept: int = 5, held: int = 5) -> list[PreviewRow]:
    """The first ``kept`` kept records of ``samples.parquet``, then the first ``held`` held
    back, read a batch at a time until both are found."""
    found: dict[bool, list[PreviewRow]] = {True: [], False: []}
    wanted = {True: kept, False: held}
    for batch in pq.ParquetFile(folder / SAMPLES).iter_batches(batch_size=_BATCH):
        for r in batch.to_pylist():
            side = bool(r["kept"])
            if len(found[side]) >= wanted[side]:
                continue
            text = varying_text(r) if r.get("messages") is not None else ""
            cause = "kept" if side else str(r.get("dropped_by"))
            found[side].append(PreviewRow(str(r.get("id")), str(r.get("split")), cause, text))
        if all(len(found[s]) >= wanted[s] for s in found):
            break
    return found[True] + found[False]


__all__ = [
    "PII_KINDS",
    "VIEW_GLOBS",
    "HeldBack",
    "PreviewRow",
    "SecretScan",
    "columns",
    "held_back",
    "preview",
    "scan_secrets",
    "view_files",
]
