"""``model-foundry dataset sessions`` and the nightly export: finished sessions -> a folder.

It brings ``session_trajectories`` up to date with the inbox, chooses the version (a finished
one is refused before anything is read), reads the finished sessions' records, runs them
through hygiene (``prepare.py``) and writes the folder (``writer.py``), recording it in
``dataset_exports``. The inbox and the DuckDB tables keep the data verbatim: only the export
is scrubbed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.datasets.card import ExportFigures, languages
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
from model_foundry.lib.datasets.writer import batched, write_export
from model_foundry.lib.tables.datasets import DATASET_EXPORTS, DatasetExportRow
from model_foundry.lib.trajectories.store import refresh_session_trajectories

# Hygiene needs the database (splits are stored per dataset): built once the file is open.
HygieneFactory = Callable[[duckdb.DuckDBPyConnection, str], Hygiene]


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
    version = choose_version(request.out_root, request.name, request.version)
    refresh_session_trajectories(db_path)
    window = SessionWindow(request.idle, request.include_active, request.since, request.until)

    def work(con: duckdb.DuckDBPyConnection) -> Prepared:
        # One transaction: the splits hygiene stores for new groups commit with the read.
        records = session_records(con, export_sessions(con, window))
        return prepare(records, hygiene(con, request.name), request.filters)

    prepared = storage.run_in_transaction(db_path, work)
    kept = [r for r in prepared.records if r["kept"]]
    figures = ExportFigures(
        dataset=request.name,
        version=version,
        kind="sessions",
        rows_by_split={},
        records=len(prepared.records),
        sessions=len({r["correlation_id"] for r in kept}),
        models=sorted({m for r in kept for m in r["models"]}),
        slots=sorted({s for r in kept for s in r["slots"]}),
        redactions_by_kind=prepared.redactions_by_kind,
        duplicates_removed=prepared.duplicates_removed,
        clusters=prepared.clusters,
        removed_by_filter=prepared.removed_by_filter,
        split_joins=prepared.split_joins,
        license=request.license or "unknown",
        languages=languages([varying_text(r) for r in kept[:2000]]),
        made_by={
            "version": foundry_version(),
            "run": request.run or "model-foundry dataset sessions",
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "since": request.since.isoformat() if request.since else None,
            "until": request.until.isoformat() if request.until else None,
            "include_active": request.include_active,
        },
    )
    path = write_export(request.out_root, SESSIONS, batched(prepared.records), figures)
    row = DatasetExportRow(
        dataset=request.name, version=version, path=str(path), rows=len(prepared.records),
        jsonl_rows=len(kept),
    )  # fmt: skip
    sql = DATASET_EXPORTS.insert_sql("replace")
    storage.run_in_transaction(db_path, lambda con: con.execute(sql, DATASET_EXPORTS.values(row)))
    return ExportOutcome(path, figures)


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
