"""``model-foundry dataset sessions`` and the nightly export: finished sessions -> a folder.

It brings ``session_trajectories`` up to date with the inbox, chooses the version (a finished
one is refused before anything is read), reads the finished sessions' records, runs them
through hygiene and writes the folder (``lib/exports``), recording it in
``dataset_exports``. The inbox and the DuckDB tables keep the data verbatim: only the export
is scrubbed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from model_foundry.lib import settings, storage
from model_foundry.lib.exports.frame import Preparation, export_records
from model_foundry.lib.exports.layouts import SESSIONS
from model_foundry.lib.exports.prepare import SESSION_FILTERS, Hygiene
from model_foundry.lib.exports.published import ExportOutcome, ExportTarget
from model_foundry.lib.exports.versions import choose_version
from model_foundry.lib.trajectories.sessions import SessionWindow, export_sessions, session_records
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


def _utc(value: str | None) -> datetime | None:
    """An ISO time; one without a zone is UTC, as the inbox's times are."""
    if not value:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def session_export_request(
    name: str,
    *,
    version: str | None = None,
    since: str | None = None,
    until: str | None = None,
    license: str | None = None,
    include_active: bool = False,
    filters: Sequence[str] | None = None,
    test_share: float = DEFAULT_TEST_SHARE,
    output_dir: str | None = None,
    run: str | None = None,
) -> SessionExport:
    """The export asked for by the asset's config or the CLI's flags: times in ISO (no zone
    is UTC), ``filters`` unset is :data:`SESSION_FILTERS`, ``output_dir`` unset is
    ``<data dir>/datasets``, the idle time the settings'."""
    out_root = Path(output_dir) if output_dir else settings.data_dir() / "datasets"
    return SessionExport(
        name=name,
        out_root=out_root,
        version=version,
        since=_utc(since),
        until=_utc(until),
        license=license,
        include_active=include_active,
        idle=timedelta(minutes=settings.session_idle_minutes()),
        filters=SESSION_FILTERS if filters is None else tuple(filters),
        test_share=test_share,
        run=run,
    )


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
    records = session_records(db_path, sessions)
    # The ids (a Python string each) go with the records once read, not kept while writing.
    del sessions
    # A session's threads share a split; near duplicates join their sessions.
    preparation = Preparation(group_of=lambda r: r["correlation_id"], filters=request.filters)
    made_by = {
        "run": request.run or "model-foundry dataset sessions",
        "since": request.since.isoformat() if request.since else None,
        "until": request.until.isoformat() if request.until else None,
        "include_active": request.include_active,
    }
    target = ExportTarget(request.out_root, request.name, version, request.license)
    clean = hygiene(Path(db_path), request.name, request.test_share)
    return export_records(db_path, target, SESSIONS, records, clean, preparation, made_by)


__all__ = [
    "HygieneFactory",
    "SessionExport",
    "export_session_dataset",
    "session_export_request",
]
