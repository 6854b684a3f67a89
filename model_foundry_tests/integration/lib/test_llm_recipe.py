"""A new kind of LLM work takes one module and the recipe: here, a title for each session.

The kind is defined in this test alone (items, one request each, one row per answer, its own
table) and run through ``LlmRun`` against the slot simulator over HTTP with a real DuckDB
file: rows are written, and a rerun answers everything from the completions store.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib import storage
from model_foundry.lib.llm import Answer, Body, LlmRun, Request, WorkKind
from model_foundry_tests.pipeline_helpers import count, rows, slot_simulator_process
from model_foundry_tests.slot_fixtures import Slots, requests_served

pytestmark = pytest.mark.timeout(300)

TITLES_DDL = """
CREATE TABLE IF NOT EXISTS session_titles (
    correlation_id VARCHAR PRIMARY KEY,
    request_key VARCHAR NOT NULL,
    title VARCHAR NOT NULL,
    slot VARCHAR,
    run_id VARCHAR
)
"""


# ---------------------------------------------------------------------------------------------
# The whole new kind of work: what it reads, asks and writes.


@dataclass(frozen=True)
class Session:
    correlation_id: str
    opening: str


@dataclass(frozen=True)
class TitleRow:
    correlation_id: str
    request_key: str
    title: str
    slot: str
    run_id: str | None


class SessionTitles(WorkKind[Session, TitleRow]):
    label = "session titles"
    event = "model_foundry.session_title"

    def request(self, item: Session) -> Request:
        messages = [
            {"role": "system", "content": "Give the session a title of at most six words."},
            {"role": "user", "content": item.opening},
        ]
        return Request("session_title", "kindergarten", Body(messages=messages),
                       correlation_id=item.correlation_id)  # fmt: skip

    def row(self, item: Session, answer: Answer, run_id: str | None) -> TitleRow | None:
        if not answer.text:
            return None
        return TitleRow(item.correlation_id, answer.request.key, answer.text,
                        answer.completion.slot, run_id)  # fmt: skip

    def write(self, db_path: Path, rows: Sequence[TitleRow]) -> int:
        with storage.connect(db_path) as con:
            con.execute(TITLES_DDL)
        return storage.insert_new_rows(
            db_path,
            "INSERT INTO session_titles VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [astuple(r) for r in rows],
        )


# ---------------------------------------------------------------------------------------------
# Where the test finds its slots: the simulator's slot file, fast retries.


@pytest.fixture(scope="module")
def sim_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with slot_simulator_process(tmp_path_factory.mktemp("titles-sim"), speed=50) as path:
        yield path


def title_sessions(
    db_path: Path, slots: Slots, sessions: list[Session], run_id: str
) -> tuple[dict[str, Any], int]:
    """The run's metadata and how many titles were new."""
    with LlmRun(db_path, slots, run_id=run_id, asset="session_titles",
                log=logging.getLogger("titles")) as run:  # fmt: skip
        outcome = run.work(SessionTitles(), sessions)
    # Every session has its title, answered now or earlier.
    assert {r.correlation_id for r in outcome.rows} == {s.correlation_id for s in sessions}
    return run.metadata(), outcome.written


def test_a_new_kind_of_work_writes_its_rows_and_a_rerun_asks_nothing_twice(
    tmp_path: Path, db_path: Path, sim_slots: Path
) -> None:
    slots = Slots(sim_slots, tmp_path / "locks")
    sessions = [Session(f"s{i}", f"Help me refactor module {i} of the writer.") for i in range(5)]
    before = requests_served(sim_slots)

    meta, written = title_sessions(db_path, slots, sessions, "run-1")
    assert written == 5
    assert meta["requests"] == 5 and meta["sent"] == 5 and meta["failed"] == 0
    assert meta["reused_from_store"] == 0 and meta["failure_causes"] == {}
    assert meta["slots_used"] and meta["slot_limiter"] != "none (no request sent)"
    titles = rows(db_path, "SELECT correlation_id, request_key, title, run_id FROM session_titles")
    assert sorted(r[0] for r in titles) == [s.correlation_id for s in sessions]
    assert all(r[2].strip() and r[3] == "run-1" for r in titles)
    # Each title's request is in the store under its key, as one successful attempt.
    for _, key, _, _ in titles:
        assert count(db_path, "SELECT count(*) FROM llm_completions WHERE request_key = ? "
                     "AND task = 'session_title' AND status = 'ok'", key) == 1  # fmt: skip
    served = requests_served(sim_slots)
    assert served - before == 5

    # One more session since: only its request goes to a slot.
    meta, written = title_sessions(
        db_path, slots, [*sessions, Session("s9", "Tune DuckDB.")], "run-2"
    )
    assert written == 1
    assert meta["reused_from_store"] == 5 and meta["sent"] == 1 and meta["ok"] == 6
    assert requests_served(sim_slots) - served == 1
    assert count(db_path, "SELECT count(*) FROM session_titles") == 6
    assert count(db_path, "SELECT count(*) FROM llm_completions") == 6
