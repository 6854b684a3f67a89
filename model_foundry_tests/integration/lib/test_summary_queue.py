"""The summary queue: filled by the typed-table step with the chat messages, emptied with the:
the integration tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from model_foundry.defs.summaries import assets as summary_assets
from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib import storage
from model_foundry.lib.inbox.typed import refresh_inbox_tables
from model_foundry.lib.tables.summaries import SUMMARY_QUEUE_STEP, TRANSLATION_QUEUE_STEP
from model_foundry_tests.shared.lib.summary_queue import (  # noqa: F401 - fixtures are found by name
    TWO_SESSIONS,
    queued,
    slot_path_fixture,
    summarise,
    translations_queued,
)

pytestmark = pytest.mark.timeout(300)

# fill_mix puts 300 events in a session: events 280..320 are the end of bench-0 and the
# start of bench-1, 12 chat events of 20.


def test_new_chat_stored_during_a_run_keeps_the_session_queued(
    db_path: Path, slot_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill_mix(db_path, *TWO_SESSIONS)
    refresh_inbox_tables(db_path)
    record = summary_assets.record_summaries

    def chat_arrives_first(run: Any, outcome: Any, gates: Any) -> Any:
        # bench-1 grows after the run read it, before its summary is stored.
        fill_mix(db_path, 320, 340)
        refresh_inbox_tables(db_path)
        return record(run, outcome, gates)

    monkeypatch.setattr(summary_assets, "record_summaries", chat_arrives_first)
    first = summarise(db_path, slot_path)
    assert first["summaries_written"] == 2
    assert queued(db_path) == ["bench-1"]  # its summary covers the read, not the new chat
    monkeypatch.setattr(summary_assets, "record_summaries", record)
    summarise(db_path, slot_path)
    assert queued(db_path) == []
    with duckdb.connect(str(db_path), read_only=True) as con:
        covered = con.execute(
            "SELECT correlation_id, list(chat_events ORDER BY chat_events) "
            "FROM session_summaries GROUP BY 1 ORDER BY 1"
        ).fetchall()
    assert covered == [("bench-0", [12]), ("bench-1", [12, 24])]


def test_an_older_file_is_seeded_once_with_what_no_summary_covers(
    db_path: Path, slot_path: Path
) -> None:
    fill_mix(db_path, *TWO_SESSIONS)
    refresh_inbox_tables(db_path)
    summarise(db_path, slot_path)
    fill_mix(db_path, 320, 340)
    refresh_inbox_tables(db_path)
    # As the version before the queue left the file: no queue, no mark.
    with duckdb.connect(str(db_path)) as con:
        con.execute("DROP TABLE session_summary_queue")
        con.execute("DROP TABLE session_summary_translation_queue")
        con.execute(
            "DELETE FROM downstream_positions WHERE step IN (?, ?)",
            [SUMMARY_QUEUE_STEP, TRANSLATION_QUEUE_STEP],
        )
    storage._schema_ready.clear()  # a new process, as far as the registry knows
    with storage.connect(db_path):
        pass
    assert queued(db_path) == ["bench-1"]  # bench-0's summary covers all of it
    assert translations_queued(db_path) == 2  # neither summary is translated
    with duckdb.connect(str(db_path)) as con:
        con.execute("DELETE FROM session_summary_queue")
    storage._schema_ready.clear()
    with storage.connect(db_path):
        pass
    assert queued(db_path) == []  # seeded once: the mark stays

    refresh_inbox_tables(db_path, rebuild=True)  # every session rebuilt, only bench-1 queued
    assert queued(db_path) == ["bench-1"]
