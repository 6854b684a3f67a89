"""The summary queue: filled by the typed-table step with the chat messages, emptied with the
summaries it stores, exactly once across a kill; seeded once on an older file, made again by
a rebuild. Real DuckDB files, the slot simulator over HTTP, the asset run by Dagster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.defs.summaries import assets as summary_assets
from model_foundry.defs.summaries.assets import session_summaries
from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib import storage
from model_foundry.lib.inbox.typed import refresh_inbox_tables
from model_foundry.lib.tables.summaries import SUMMARY_QUEUE_STEP, TRANSLATION_QUEUE_STEP
from model_foundry_tests.pipeline_helpers import slot_simulator_process
from model_foundry_tests.tiers import REPO_ROOT

pytestmark = pytest.mark.timeout(300)

ROOT = REPO_ROOT

# fill_mix puts 300 events in a session: events 280..320 are the end of bench-0 and the
# start of bench-1, 12 chat events of 20.
TWO_SESSIONS = (280, 320)


@pytest.fixture(scope="module")
def slot_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with slot_simulator_process(tmp_path_factory.mktemp("sim"), speed=50) as path:
        yield path


def queued(db: Path) -> list[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT correlation_id FROM session_summary_queue ORDER BY 1").fetchall()
    return [r[0] for r in rows]


def translations_queued(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM session_summary_translation_queue").fetchone()[0]


def summarise(db: Path, slot_path: Path, asset: Any = session_summaries) -> dict[str, Any]:
    result = dg.materialize(
        [asset],
        resources={
            "duckdb": FoundryDuckDB(database=str(db)),
            "slots": SlotsResource(slot_file=str(slot_path)),
        },
    )
    assert result.success
    mat = result.get_asset_materialization_events()[0].step_materialization_data.materialization
    return {k: v.value for k, v in mat.metadata.items()}


_KILLED = """
import os, sys
import dagster as dg
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.defs.summaries import assets as summary_assets
from model_foundry.defs.summaries.assets import session_summaries, session_summary_translations
from model_foundry.lib import storage
from model_foundry.lib.summaries import rows

db, slots, where = sys.argv[1:4]
real = storage.run_in_transaction

def killed(path, work, **kw):
    dequeued = []

    class Killing:
        # The summaries are inserted in the transaction; at its dequeue the process dies
        # (at_dequeue) or the transaction commits and then it dies (after_commit).
        def __init__(self, con):
            self.con = con

        def execute(self, sql, *args):
            if sql == rows.DEQUEUE_SQL:
                if where == "at_dequeue":
                    os._exit(7)
                dequeued.append(args)
            return self.con.execute(sql, *args)

    done = real(path, lambda con: work(Killing(con)), **kw)
    if dequeued:
        os._exit(7)
    return done

storage.run_in_transaction = killed
dg.materialize(
    [session_summaries],
    resources={"duckdb": FoundryDuckDB(database=db), "slots": SlotsResource(slot_file=slots)},
)
"""


def test_new_chat_stored_during_a_run_keeps_the_session_queued(
    db_path: Path, slot_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill_mix(db_path, *TWO_SESSIONS)
    refresh_inbox_tables(db_path)
    record = summary_assets.record_summaries

    def chat_arrives_first(run: Any, outcome: Any) -> int:
        # bench-1 grows after the run read it, before its summary is stored.
        fill_mix(db_path, 320, 340)
        refresh_inbox_tables(db_path)
        return record(run, outcome)

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
