"""The summary queue: filled by the typed-table step with the chat messages, emptied with the
summaries it stores, exactly once across a kill; seeded once on an older file, made again by
a rebuild. Real DuckDB files, the slot simulator over HTTP, the asset run by Dagster.

What the unit, integration and system tests of ``lib/test_summary_queue.py`` share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.defs.summaries.assets import session_summaries
from model_foundry_tests.pipeline_helpers import slot_simulator_process
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT


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

        def __getattr__(self, name):
            # Everything else (register, unregister, ...) as the connection does it.
            return getattr(self.con, name)

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


@pytest.fixture(name="slot_path", scope="module")
def slot_path_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with slot_simulator_process(tmp_path_factory.mktemp("sim"), speed=50) as path:
        yield path


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
