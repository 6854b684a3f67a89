"""The summary queue: filled by the typed-table step with the chat messages, emptied with the
summaries it stores, exactly once across a kill; seeded once on an older file, made again by
a rebuild. Real DuckDB files, the slot simulator over HTTP, the asset run by Dagster."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib.inbox.typed import refresh_inbox_tables
from model_foundry.lib.summaries.pending import sessions_to_summarise
from model_foundry_tests.tiers import REPO_ROOT

pytestmark = pytest.mark.timeout(300)

ROOT = REPO_ROOT

# fill_mix puts 300 events in a session: events 280..320 are the end of bench-0 and the
# start of bench-1, 12 chat events of 20.
TWO_SESSIONS = (280, 320)


def queued(db: Path) -> list[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT correlation_id FROM session_summary_queue ORDER BY 1").fetchall()
    return [r[0] for r in rows]


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


def test_the_typed_table_step_queues_sessions_with_their_new_chat(db_path: Path) -> None:
    fill_mix(db_path, *TWO_SESSIONS)
    refresh_inbox_tables(db_path)
    assert queued(db_path) == ["bench-0", "bench-1"]
    pending = sessions_to_summarise(db_path, 10)
    assert [(s.correlation_id, s.chat_events) for s in pending] == [
        ("bench-0", 12),
        ("bench-1", 12),
    ]
    assert all(len(s.lines) == 3 * s.chat_events for s in pending)
    assert sessions_to_summarise(db_path, 1)[0].correlation_id == "bench-0"
