"""session_trajectories in a real DuckDB file: by commit position, incremental == at once."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import storage
from model_foundry.lib.events import CHAT_PERSIST, TOOL_CALL, InboxEvent, validate_message
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.publish import OutgoingEvent
from model_foundry.lib.trajectories.sessions import SessionWindow, export_sessions, session_records
from model_foundry.lib.trajectories.store import refresh_session_trajectories


def _store(db: Path, events: list[OutgoingEvent], first_seq: int) -> None:
    parsed = [
        validate_message(e.subject, e.body, first_seq + n, datetime.now(UTC))
        for n, e in enumerate(events)
    ]
    assert all(isinstance(p, InboxEvent) for p in parsed)
    storage.run_in_transaction(db, lambda con: write_batch(con, "EVENTS", parsed, []))


def _records(db: Path) -> list[dict]:
    with storage.connect(db) as con:
        sessions = export_sessions(con, SessionWindow(include_active=True))
    return list(session_records(db, sessions))


def test_two_refreshes_read_only_new_commits_and_equal_one_rebuild(tmp_path: Path) -> None:
    events = list(sample_events(400, sessions=4, seed=21))
    db = tmp_path / "foundry.duckdb"
    half = 200
    _store(db, events[:half], 1)
    first = refresh_session_trajectories(db)
    _store(db, events[half:], half + 1)
    second = refresh_session_trajectories(db)
    wanted = {CHAT_PERSIST, TOOL_CALL}
    assert first.events == sum(e.subject in wanted for e in events[:half])
    assert second.events == sum(e.subject in wanted for e in events[half:])
    assert refresh_session_trajectories(db).events == 0  # nothing new: nothing read
    incremental = _records(db)
    refresh_session_trajectories(db, rebuild=True)
    assert _records(db) == incremental
    assert len({r["correlation_id"] for r in incremental}) == 4
    assert any(m["tool_calls"] for r in incremental for m in r["messages"])
    assert any(m["reasoning"] for r in incremental for m in r["messages"])


def test_a_session_is_exported_once_it_is_idle(tmp_path: Path) -> None:
    db = tmp_path / "foundry.duckdb"
    _store(db, list(sample_events(100, sessions=2, seed=3)), 1)
    refresh_session_trajectories(db)
    with storage.connect(db) as con:
        active = export_sessions(con, SessionWindow())
        every = export_sessions(con, SessionWindow(include_active=True))
        past = export_sessions(con, SessionWindow(now=datetime(2000, 1, 1, tzinfo=UTC)))
        later = datetime(2100, 1, 1, tzinfo=UTC)
        since_later = export_sessions(con, SessionWindow(since=later))
        until_later = export_sessions(con, SessionWindow(until=later))
        until_past = export_sessions(con, SessionWindow(until=datetime(2000, 1, 1, tzinfo=UTC)))
    # sample_events starts `count` minutes ago, one second apart: all idle for 98 minutes.
    assert active == every and len(every) == 2
    assert past == [] == since_later == until_past
    assert until_later == every


def test_a_growing_session_is_longer_in_the_next_export_never_twice(tmp_path: Path) -> None:
    events = list(sample_events(300, sessions=1, seed=13))
    db = tmp_path / "foundry.duckdb"
    _store(db, events[:163], 1)
    refresh_session_trajectories(db)
    before = {r["id"]: r for r in _records(db)}
    _store(db, events[163:], 164)
    refresh_session_trajectories(db)
    after = _records(db)
    ids = [r["id"] for r in after]
    assert len(ids) == len(set(ids)), "a thread twice in one export"
    grown = {r["id"]: r for r in after}
    assert set(before) <= set(grown)
    assert any(grown[i]["turns"] > before[i]["turns"] for i in before)
    for rid, old in before.items():
        # The thread keeps what it had: the earlier turns, in order, then the new ones.
        assert grown[rid]["messages"][: len(old["messages"])] == old["messages"]
