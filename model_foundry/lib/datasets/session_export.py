"""``model-foundry dataset sessions`` and the nightly export: finished sessions -> a folder.

It brings ``session_trajectories`` up to date with the inbox, chooses the version (a finished
one is refused before anything is read), reads the finished sessions' records, runs them
through hygiene (``prepare.py``) and writes the folder (``writer.py``), recording it in
``dataset_exports``. The inbox and the DuckDB tables keep the data verbatim: only the export
is scrubbed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path

from model_foundry.lib import storage
from model_foundry.lib.datasets.card import ExportFigures, languages
from model_foundry.lib.datasets.export import export_dir
from model_foundry.lib.datasets.layouts import SESSIONS
from model_foundry.lib.datasets.prepare import (
    SESSION_FILTERS,
    Hygiene,
    Prepared,
    prepare,
    varying_text,
)
from model_foundry.lib.datasets.sessions import SessionWindow, export_sessions, session_records
from model_foundry.lib.datasets.versions import choose_version
from model_foundry.lib.datasets.writer import write_export
from model_foundry.lib.tables.datasets import DATASET_EXPORTS, DatasetExportRow
from model_foundry.lib.trajectories.store import refresh_session_trajectories

# Hygiene for one dataset of one DuckDB file (its splits are stored there).
HygieneFactory = Callable[[Path, str, float], Hygiene]
DEFAULT_TEST_SHARE = 0.05


@dataclass(frozen=True)
class SessionExport:
    """What to export: the dataset's name and version, which sessions, under what license."""

    name: str
    out_root: Path
    version: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    license: str | None = None
    include_active: bool = False
    idle: timedelta = timedelta(minutes=30)
    filters: Sequence[str] = SESSION_FILTERS
    test_share: float = DEFAULT_TEST_SHARE
    run: str | None = None


@dataclass(frozen=True)
class ExportOutcome:
    path: Path
    figures: ExportFigures


def foundry_version() -> str:
    try:
        return metadata.version("model-foundry")
    except metadata.PackageNotFoundError:
        return "unknown"


def export_session_dataset(
    db_path: str | Path, request: SessionExport, hygiene: HygieneFactory
) -> ExportOutcome:
    if not 0 < request.test_share < 1:
        raise ValueError(f"test share {request.test_share} must be between 0 and 1")
    version = choose_version(request.out_root, request.name, request.version)
    refresh_session_trajectories(db_path)
    window = SessionWindow(request.idle, request.include_active, request.since, request.until)

    with storage.connect(db_path) as con:
        sessions = export_sessions(con, window)
    spool_dir = export_dir(request.out_root, request.name, version).parent
    spool_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".spool-", dir=spool_dir) as tmp:
        prepared = prepare(
            session_records(db_path, sessions),
            hygiene(Path(db_path), request.name, request.test_share),
            Path(tmp) / "records.parquet",
            SESSIONS.schema,
            # A session's threads share a split; near duplicates join their sessions.
            group_of=lambda r: r["correlation_id"],
            filters=request.filters,
        )
        return _write(db_path, request, version, prepared)


def _write(
    db_path: str | Path, request: SessionExport, version: str, prepared: Prepared
) -> ExportOutcome:
    """The folder of a prepared export, and its row in ``dataset_exports``."""
    kept = _Kept()
    batches = (kept.note(b) for b in prepared.batches())
    figures = ExportFigures(
        dataset=request.name,
        version=version,
        kind="sessions",
        rows_by_split={},
        records=prepared.records,
        sessions=0,
        models=[],
        slots=[],
        redactions_by_kind=prepared.redactions_by_kind,
        duplicates_removed=prepared.duplicates_removed,
        clusters=prepared.clusters,
        removed_by_filter=prepared.removed_by_filter,
        split_joins=prepared.split_joins,
        license=request.license or "unknown",
        languages=[],
        made_by={
            "version": foundry_version(),
            "run": request.run or "model-foundry dataset sessions",
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "since": request.since.isoformat() if request.since else None,
            "until": request.until.isoformat() if request.until else None,
            "include_active": request.include_active,
        },
    )
    # The card is written after the last batch: the kept records' figures are known by then.
    path = write_export(request.out_root, SESSIONS, batches, figures, before_card=kept.fill)
    row = DatasetExportRow(
        dataset=request.name, version=version, path=str(path), rows=prepared.records,
        jsonl_rows=sum(figures.rows_by_split.values()),
    )  # fmt: skip
    sql = DATASET_EXPORTS.insert_sql("replace")
    storage.run_in_transaction(db_path, lambda con: con.execute(sql, DATASET_EXPORTS.values(row)))
    return ExportOutcome(path, figures)


class _Kept:
    """The kept records' sessions, models, slots and a sample of their text, as they pass."""

    def __init__(self) -> None:
        self.sessions: set[str] = set()
        self.models: set[str] = set()
        self.slots: set[str] = set()
        self.texts: list[str] = []

    def note(self, batch: list[dict]) -> list[dict]:
        for r in batch:
            if r["kept"]:
                self.sessions.add(r["correlation_id"])
                self.models.update(r["models"])
                self.slots.update(r["slots"])
                if len(self.texts) < 2000:
                    self.texts.append(varying_text(r))
        return batch

    def fill(self, figures: ExportFigures) -> None:
        figures.sessions = len(self.sessions)
        figures.models = sorted(self.models)
        figures.slots = sorted(self.slots)
        figures.languages = languages(self.texts)


def figures_line(outcome: ExportOutcome) -> str:
    f = outcome.figures
    splits = ", ".join(f"{s} {n}" for s, n in f.rows_by_split.items())
    redactions = sum(f.redactions_by_kind.values())
    return (
        f"exported {f.dataset}/{f.version} to {outcome.path}: {splits} records from "
        f"{f.sessions} sessions; {redactions} redactions, {f.duplicates_removed} duplicates "
        f"removed in {f.clusters} clusters, filters removed "
        f"{sum(f.removed_by_filter.values())}"
    )


__all__ = [
    "ExportOutcome",
    "HygieneFactory",
    "SessionExport",
    "export_session_dataset",
    "figures_line",
]
