"""The inbox sensor's decision, case by case, from the facts a tick reads."""

from __future__ import annotations

import json

from model_foundry.lib.inbox.sensor_decision import ORPHANED_SINCE, decide_inbox_tick
from model_foundry.lib.nats.consumers import ConsumerPending

SUBJECT = "llm.tool_call"


def counts(pending: int = 0, ack_pending: int = 0, ack_wait_s: float = 30.0) -> ConsumerPending:
    return ConsumerPending(
        subject=SUBJECT,
        consumer="inbox_llm_tool_call",
        num_pending=pending,
        num_ack_pending=ack_pending,
        num_redelivered=0,
        ack_wait_s=ack_wait_s,
    )


def decide(pending: ConsumerPending | None, cursor: str | None = None, now: float = 1000.0, **kw):
    facts = {"run_in_progress": None, "unavailable": None} | kw
    return decide_inbox_tick(subject=SUBJECT, pending=pending, cursor=cursor, now=now, **facts)


def test_pending_messages_request_a_run() -> None:
    decision = decide(counts(pending=6))
    assert decision.request_run
    assert decision.reason == "6 messages pending"


def test_nothing_pending_skips_naming_the_consumer() -> None:
    decision = decide(counts())
    assert not decision.request_run
    assert decision.reason == "nothing pending on inbox_llm_tool_call"
    assert json.loads(decision.cursor or "") == {}


def test_a_run_in_progress_skips_and_leaves_the_cursor_alone() -> None:
    running = "run ab12cd34 for llm.tool_call is started"
    decision = decide(counts(pending=6), run_in_progress=running)
    assert not decision.request_run
    assert decision.reason == running
    assert decision.cursor is None


def test_unreadable_counts_skip_with_the_reason_and_leave_the_cursor_alone() -> None:
    why = "NATS at nats://127.0.0.1:1 is not reachable"
    decision = decide(None, unavailable=why)
    assert (decision.request_run, decision.reason, decision.cursor) == (False, why, None)


def test_orphaned_messages_wait_for_ack_wait_then_request_one_run() -> None:
    orphaned = counts(ack_pending=3, ack_wait_s=30.0)
    first = decide(orphaned, now=1000.0)
    assert not first.request_run
    assert json.loads(first.cursor or "") == {ORPHANED_SINCE: 1000.0}
    # Before ack_wait has passed JetStream would not redeliver them: no run yet.
    early = decide(orphaned, cursor=first.cursor, now=1029.0)
    assert not early.request_run
    due = decide(orphaned, cursor=early.cursor, now=1030.0)
    assert due.request_run
    assert due.reason == "3 messages due for redelivery"
    assert ORPHANED_SINCE not in json.loads(due.cursor or "")


def test_new_messages_clear_the_orphan_clock() -> None:
    waiting = json.dumps({ORPHANED_SINCE: 900.0, "other": 1})
    decision = decide(counts(pending=1, ack_pending=2), cursor=waiting)
    assert decision.request_run
    assert json.loads(decision.cursor or "") == {"other": 1}
    quiet = decide(counts(), cursor=waiting)
    assert json.loads(quiet.cursor or "") == {"other": 1}
