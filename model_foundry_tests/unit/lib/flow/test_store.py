"""session_flow and session_routing on a real DuckDB file fed through the inbox and typed
tables, as the assets feed them: growing sessions are replaced, shares sum to 1."""

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import duckdb
import pytest

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings
from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.flow.store import (
    load_session_graph,
    recent_verdict,
    refresh_session_flow,
    refresh_session_routing,
)
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.inbox.typed import refresh_inbox_tables
from model_foundry.lib.publish import OutgoingEvent, make_event
from model_foundry.lib.slots.config import SlotFile, load_slot_file
from model_foundry.lib.storage import run_in_transaction

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def slot_file() -> SlotFile:
    return load_slot_file(settings.SHIPPED_SLOT_FILE)


def ingest(db_path: Path, events: Iterable[OutgoingEvent], *, tables: bool = True) -> None:
    checked = []
    for seq, e in enumerate(events, start=1):
        found = validate_message(e.subject, e.body, seq, T0, T0)
        assert isinstance(found, InboxEvent)
        checked.append(found)
    run_in_transaction(db_path, partial(write_batch, stream="S", events=checked, dead=[]))
    if tables:
        refresh_inbox_tables(db_path)


def query(db_path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_session_flow_rows_are_built_once_and_replaced_when_a_session_grows(
    db_path: Path,
) -> None:
    ingest(db_path, sample_events(400, sessions=4, seed=2))
    first = refresh_session_flow(db_path)
    assert len(first.rows) == first.total_sessions == 4
    assert first.uncoordinated_sessions == 2
    assert refresh_session_flow(db_path).rows == []  # nothing new
    grown = first.rows[0]
    more = [
        make_event("llm.flow.lineage", payload, grown.correlation_id, occurred_at=T0)
        for payload in (
            {"kind": "node", "node_id": "extra", "label": "review"},
            {"kind": "edge", "source": "extra", "target": "nowhere"},
        )
    ]
    ingest(db_path, more)
    again = refresh_session_flow(db_path)
    assert [r.correlation_id for r in again.rows] == [grown.correlation_id]
    (row,) = again.rows
    assert (row.node_events, row.edge_events) == (grown.node_events + 1, grown.edge_events + 1)
    assert row.dangling_edges >= 1 and row.roots == grown.roots + 1
    assert query(db_path, "SELECT count(*), count(DISTINCT correlation_id) FROM session_flow") == [
        (4, 4)
    ]
    stored = query(
        db_path,
        f"SELECT node_events, uncoordinated, slots FROM session_flow "
        f"WHERE correlation_id = '{row.correlation_id}'",
    )
    assert stored == [(row.node_events, row.uncoordinated, ["naughty"])]
    graph = load_session_graph(db_path, row.correlation_id)
    assert graph is not None and graph.node_events == row.node_events
    assert load_session_graph(db_path, "no-such-session") is None


def test_session_routing_shares_sum_to_one_and_the_window_warns(
    db_path: Path, slot_file: SlotFile
) -> None:
    ingest(db_path, sample_events(300, sessions=5, seed=4))
    done = refresh_session_routing(db_path, slot_file)
    assert len(done.sessions) == 5
    sums = query(db_path, "SELECT correlation_id, sum(share) FROM session_routing GROUP BY ALL")
    assert len(sums) == 5 and all(total == pytest.approx(1.0) for _, total in sums)
    assert refresh_session_routing(db_path, slot_file).sessions == []
    # A turn on a slot the slot file lacks, in a session that already has rows.
    session = sums[0][0]
    # Sample events happen just before now: this turn is the newest of all.
    late = datetime.now(UTC) + timedelta(hours=1)
    payload = {"messages": [{"role": "assistant", "content": "hi"}], "slot": "bigbox",
               "usage": {"prompt_tokens": 5, "completion_tokens": 1}}  # fmt: skip
    ingest(db_path, [make_event("llm.chat.persist", payload, session, occurred_at=late)])
    assert refresh_session_routing(db_path, slot_file).sessions == [session]
    rows = query(
        db_path,
        f"SELECT slot, named_as, turns, session_turns, sum(share) OVER () "
        f"FROM session_routing WHERE correlation_id = '{session}' ORDER BY slot = 'unknown'",
    )
    assert rows[-1][:3] == ("unknown", ["bigbox"], 1)
    assert sum(r[2] for r in rows) == rows[0][3] and rows[0][4] == pytest.approx(1.0)
    weekly = dict(query(db_path, "SELECT slot, share FROM slot_share_weekly"))
    assert "kindergarten" not in weekly and weekly["unknown"] > 0
    assert sum(weekly.values()) == pytest.approx(1.0, abs=1e-3)

    verdict = recent_verdict(db_path, slot_file, sessions=20, profile="standard")
    assert verdict.sessions == 5 and verdict.idle == ("kindergarten",)
    assert verdict.unknown_names == ("bigbox",)
    assert verdict.warnings()[0].startswith(
        f"the orchestrator routed 0 of {verdict.turns:,} agent turns to kindergarten (live in "
        "profile standard) in the last 5 sessions; naughty took "
    )
    # Only the newest session in the window: the one with the late turn.
    assert recent_verdict(db_path, slot_file, sessions=1, profile="standard").turns == sum(
        r[0] for r in query(
            db_path, f"SELECT turns FROM session_routing WHERE correlation_id = '{session}'"
        )
    )  # fmt: skip


def test_a_file_from_before_node_slots_gets_the_columns_and_keeps_its_rows(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    with duckdb.connect(str(db_path)) as con:
        con.execute(
            "CREATE TABLE flow_nodes (event_id VARCHAR PRIMARY KEY, correlation_id VARCHAR "
            "NOT NULL, occurred_at TIMESTAMPTZ NOT NULL, node_id VARCHAR NOT NULL, label VARCHAR)"
        )
        con.execute("INSERT INTO flow_nodes VALUES ('e1', 's', ?, 'n1', 'plan')", [T0])
    ingest(db_path, [make_event("llm.flow.lineage", {"kind": "node", "node_id": "n2",
                                "slot": "naughty"}, "s", occurred_at=T0)])  # fmt: skip
    assert query(db_path, "SELECT node_id, label, slot FROM flow_nodes ORDER BY node_id") == [
        ("n1", "plan", None),
        ("n2", None, "naughty"),
    ]
    assert [r.slots for r in refresh_session_flow(db_path).rows] == [("naughty",)]


def test_sessions_wait_for_the_typed_tables_to_take_their_commits_in(
    db_path: Path, slot_file: SlotFile
) -> None:
    # Stored in the inbox, not yet in flow_nodes / chat_messages: nothing to read yet, and
    # nothing skipped either.
    ingest(db_path, sample_events(200, sessions=2, seed=8), tables=False)
    assert refresh_session_flow(db_path).rows == []
    assert refresh_session_routing(db_path, slot_file).sessions == []
    refresh_inbox_tables(db_path)
    flow = refresh_session_flow(db_path)
    assert len(flow.rows) == 2
    assert all(r.node_events + r.edge_events == 20 for r in flow.rows)
    assert len(refresh_session_routing(db_path, slot_file).sessions) == 2
