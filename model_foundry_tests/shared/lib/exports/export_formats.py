"""The export folder's views: OpenAI lines, the hf/ config that datasets 3.6 and 5.x load
offline, samples.parquet, the card and the manifest.

What the unit, integration and system tests of ``lib/exports/test_export_formats.py`` share."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import storage
from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.exports.card import ExportFigures
from model_foundry.lib.exports.layouts import SESSIONS
from model_foundry.lib.exports.writer import batched, write_export
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.trajectories.sessions import SessionWindow, export_sessions, session_records
from model_foundry.lib.trajectories.store import refresh_session_trajectories

OPENAI_MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name", "weight"}


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    db = tmp_path / "foundry.duckdb"
    parsed = [
        validate_message(e.subject, e.body, n + 1, datetime.now(UTC))
        for n, e in enumerate(sample_events(300, sessions=3, seed=17))
    ]
    assert all(isinstance(p, InboxEvent) for p in parsed)
    storage.run_in_transaction(db, lambda con: write_batch(con, "EVENTS", parsed, []))
    refresh_session_trajectories(db)
    with storage.connect(db) as con:
        sessions = export_sessions(con, SessionWindow())
    records = list(session_records(db, sessions))
    for r in records:
        # The writer is given each record's group and split; hygiene decides them.
        digest = hashlib.sha256(r["correlation_id"].encode()).digest()[0]
        r.update(cluster_id=r["correlation_id"], split="test" if digest % 3 == 0 else "train")
        r.update(kept=r["truncated_turns"] == 0, dropped_by=None)
        if not r["kept"]:
            r["dropped_by"] = "filter:truncated"
    if {r["split"] for r in records if r["kept"]} != {"train", "test"}:
        next(r for r in records if r["kept"])["split"] = "test"
    return records


def _figures(records: list[dict[str, Any]], version: str = "v1") -> ExportFigures:
    return ExportFigures(
        dataset="agents",
        version=version,
        kind="sessions",
        rows_by_split={},
        records=len(records),
        sessions=len({r["correlation_id"] for r in records}),
        models=sorted({m for r in records for m in r["models"]}),
        slots=sorted({s for r in records for s in r["slots"]}),
        redactions_by_kind={},
        duplicates_removed=0,
        clusters=len({r["cluster_id"] for r in records}),
        removed_by_filter={"truncated": sum(not r["kept"] for r in records)},
        split_joins=0,
        license="unknown",
        languages=["en", "ja"],
        made_by={"version": "test", "run": "test"},
    )


@pytest.fixture(name="export", scope="module")
def export_fixture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("export")
    records = _records(tmp)
    folder = write_export(tmp / "datasets", SESSIONS, batched(records, 7), _figures(records))
    return folder, records


def _kept(records: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    return [r for r in records if r["kept"] and r["split"] == split]
