"""The summary queue: filled by the typed-table step with the chat messages, emptied with the:
the system tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from model_foundry.defs.summaries.assets import session_summary_translations
from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib.inbox.typed import refresh_inbox_tables
from model_foundry_tests.shared.lib.summary_queue import (  # noqa: F401 - fixtures are found by name
    _KILLED,
    ROOT,
    TWO_SESSIONS,
    queued,
    slot_path_fixture,
    summarise,
    translations_queued,
)

pytestmark = pytest.mark.timeout(300)

# fill_mix puts 300 events in a session: events 280..320 are the end of bench-0 and the
# start of bench-1, 12 chat events of 20.


def summaries_per_session(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT correlation_id, count(*) FROM session_summaries GROUP BY 1"
        ).fetchall()
    return dict(rows)


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
