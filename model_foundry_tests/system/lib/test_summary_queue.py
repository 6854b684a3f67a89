"""The summary queue: filled by the typed-table step with the chat messages, emptied with the
summaries it stores, exactly once across a kill; seeded once on an older file, made again by
a rebuild. Real DuckDB files, the slot simulator over HTTP, the asset run by Dagster."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.defs.summaries.assets import session_summaries, session_summary_translations
from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib.inbox.typed import refresh_inbox_tables
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


def summaries_per_session(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT correlation_id, count(*) FROM session_summaries GROUP BY 1"
        ).fetchall()
    return dict(rows)


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


def summarise_killed(db: Path, slot_path: Path, where: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED), str(db), str(slot_path), where],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 7, done.stderr[-3000:]


def test_a_run_killed_between_storing_and_dequeuing_stores_each_summary_once(
    db_path: Path, slot_path: Path
) -> None:
    fill_mix(db_path, *TWO_SESSIONS)
    refresh_inbox_tables(db_path)

    summarise_killed(db_path, slot_path, "at_dequeue")
    # The summaries and the dequeue are one transaction: nothing of the killed run stayed.
    assert summaries_per_session(db_path) == {}
    assert queued(db_path) == ["bench-0", "bench-1"]

    rerun = summarise(db_path, slot_path)  # the killed run's sessions, summarised now
    assert rerun["sessions_pending"] == 2 and rerun["summaries_written"] == 2
    assert summaries_per_session(db_path) == {"bench-0": 1, "bench-1": 1}
    assert queued(db_path) == []

    fill_mix(db_path, 320, 340)  # new chat in bench-1 only
    refresh_inbox_tables(db_path)
    assert queued(db_path) == ["bench-1"]
    summarise_killed(db_path, slot_path, "after_commit")
    assert summaries_per_session(db_path) == {"bench-0": 1, "bench-1": 2}
    assert queued(db_path) == []
    again = summarise(db_path, slot_path)
    assert again["sessions_pending"] == 0
    assert summaries_per_session(db_path) == {"bench-0": 1, "bench-1": 2}

    # Each stored summary was queued for its translation once, and is translated once.
    assert translations_queued(db_path) == 3
    translated = summarise(db_path, slot_path, session_summary_translations)
    assert translated["summaries_pending"] == 3 and translated["translations_written"] == 3
    assert translations_queued(db_path) == 0
    rerun = summarise(db_path, slot_path, session_summary_translations)
    assert rerun["summaries_pending"] == 0
