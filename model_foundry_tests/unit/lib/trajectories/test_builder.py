"""Session trajectories from inbox events: both persistence styles, tool events, threads."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from model_foundry.devtools.sample_events import sample_events
from model_foundry.devtools.sample_sessions import TOOLS_SCHEMA, Worker
from model_foundry.lib.events import CHAT_PERSIST, TOOL_CALL
from model_foundry.lib.trajectories import (
    SessionEvent,
    ThreadState,
    build_sessions,
    trajectory_records,
)

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _chat(n: int, messages: list[dict[str, Any]], corr: str = "s1", **extra: Any) -> SessionEvent:
    payload = {"messages": messages, "model": "glm-5.1", "slot": "grandpa", **extra}
    return SessionEvent(f"e{n:04d}", CHAT_PERSIST, corr, T0 + timedelta(seconds=n), payload)


def _tool(n: int, tool: str, arguments: Any, corr: str = "s1", **extra: Any) -> SessionEvent:
    payload = {"tool": tool, "arguments": arguments, "result": "ok", "status": "ok", **extra}
    return SessionEvent(f"e{n:04d}", TOOL_CALL, corr, T0 + timedelta(seconds=n), payload)


def _records(events: list[SessionEvent], states: list[ThreadState] | None = None) -> list[dict]:
    builders, turns = build_sessions(events, states or [])
    by_thread = defaultdict(list)
    for new in turns:
        by_thread[(new.correlation_id, new.thread)].append(new.turn)
    out = []
    for corr, builder in sorted(builders.items()):
        for name, state in sorted(builder.threads.items()):
            out += trajectory_records(state, by_thread[(corr, name)])
    return out


def _conversation(
    style: str, calls: int = 12, seed: int = 5
) -> tuple[list[SessionEvent], list[list[dict]]]:
    """One worker's calls persisted in ``style``, with a tool event for every tool it ran,
    and the conversations it held (what the records must be)."""
    worker = Worker("s1", "w0", random.Random(seed), secrets=None)
    events: list[SessionEvent] = []
    held: list[list[dict]] = []
    for _ in range(calls):
        worker.next_call("reasoning_content")
        if not held or held[-1] is not worker.messages:
            held.append(worker.messages)
        extra: dict[str, Any] = {"tools": TOOLS_SCHEMA}
        if style == "new":
            extra["thread_id"] = worker.thread_id
        events.append(_chat(len(events), worker.persisted(style), **extra))
        while worker.runs:
            run = worker.runs.popleft()
            events.append(_tool(len(events), run.name, run.arguments))
    return events, held


def _sent(message: dict) -> dict:
    """A record's message in the shape the worker held it."""
    kept = {"role": message["role"], "content": message["content"]}
    if message["tool_calls"]:
        kept["tool_calls"] = message["tool_calls"]
    if message["role"] == "tool":
        kept.update(tool_call_id=message["tool_call_id"], name=message["name"])
    if message["reasoning"]:
        kept["reasoning_content"] = message["reasoning"]
    return kept


def test_both_persistence_styles_give_the_same_trajectory() -> None:
    whole_events, held = _conversation("whole")
    new_events, _ = _conversation("new")
    whole, new = _records(whole_events), _records(new_events)
    assert [r["messages"] for r in whole] == [r["messages"] for r in new]
    assert len(whole) == len(held) == 2  # twelve calls are two tasks of six
    for record, conversation in zip(whole, held, strict=True):
        # Tool results of the last call were never persisted: no later call carried them.
        upto = max(i for i, m in enumerate(conversation) if m["role"] == "assistant") + 1
        assert [_sent(m) for m in record["messages"]] == conversation[:upto]
        assert json.loads(record["tools"]) == TOOLS_SCHEMA


def test_tool_events_of_calls_in_the_chat_are_matched_not_added() -> None:
    events, _ = _conversation("whole", calls=6)
    builders, _ = build_sessions(events)
    (state,) = builders["s1"].threads.values()
    tool_events = sum(e.subject == TOOL_CALL for e in events)
    assert tool_events > 0
    assert state.tool_events == state.tool_events_matched == tool_events
    assert set(state.event_ids) == {e.event_id for e in events}


def test_a_tool_event_no_chat_holds_becomes_a_call_and_its_result_in_time() -> None:
    events = [
        _chat(0, [{"role": "user", "content": "list the notes"}]),
        _chat(1, [{"role": "assistant", "content": "Looking."}]),
        _tool(2, "obsidian.search", {"query": "duckdb", "limit": 3}),
        _chat(3, [{"role": "assistant", "content": "Found three."}]),
    ]
    (record,) = _records(events)
    roles = [m["role"] for m in record["messages"]]
    assert roles == ["user", "assistant", "assistant", "tool", "assistant"]
    call = record["messages"][2]["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == "obsidian.search"
    assert json.loads(call["function"]["arguments"]) == {"query": "duckdb", "limit": 3}
    answer = record["messages"][3]
    assert answer["tool_call_id"] == call["id"] and answer["name"] == "obsidian.search"


def test_a_tool_event_before_the_chat_that_holds_its_call_is_in_the_record_once() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"p": 1}'}}
    events = [
        _chat(0, [{"role": "user", "content": "find it"}], thread_id="w0"),
        _tool(1, "grep", {"p": 1}, thread_id="w0"),  # published before the chat with its call
        _chat(
            2,
            [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "name": "grep", "content": "ok"},
                {"role": "assistant", "content": "Found it."},
            ],
            thread_id="w0",
        ),
        # A later call of the same tool with the same arguments is a call of its own.
        _chat(
            3,
            [{"role": "assistant", "content": None, "tool_calls": [{**call, "id": "c2"}]}],
            thread_id="w0",
        ),
    ]
    (record,) = _records(events)
    roles = [m["role"] for m in record["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "assistant"]
    assert record["messages"][3]["content"] == "Found it."
    assert record["messages"][4]["tool_calls"][0]["id"] == "c2"


def test_matching_compares_arguments_as_json_whatever_their_form() -> None:
    asked = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"function": {"name": "grep", "arguments": '{"pattern": "x", "n": 2}'}}],
    }
    events = [
        _chat(0, [{"role": "user", "content": "find x"}, asked]),
        _tool(1, "grep", {"n": 2, "pattern": "x"}),  # an object, keys in another order
        _tool(2, "grep", {"n": 3, "pattern": "x"}),  # other arguments: not that call
    ]
    (record,) = _records(events)
    assert [m["role"] for m in record["messages"]] == ["user", "assistant", "assistant", "tool"]
    generated = record["messages"][1]["tool_calls"][0]["id"]
    assert generated.startswith("call_")  # the publisher sent no id: one is made, stably
    assert record["messages"][3]["tool_call_id"] != generated


def test_reasoning_is_kept_under_either_name() -> None:
    events = [
        _chat(
            0,
            [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b", "reasoning": "r1"},
            ],
        ),
        _chat(1, [{"role": "user", "content": "c"}]),
        _chat(2, [{"role": "assistant", "content": "d", "reasoning_content": "r2"}]),
    ]
    (record,) = _records(events)
    assert [m["reasoning"] for m in record["messages"]] == [None, "r1", None, "r2"]
    assert record["models"] == ["glm-5.1"] and record["slots"] == ["grandpa"]


def test_a_session_built_in_two_runs_equals_one_built_at_once() -> None:
    events = _conversation("whole", calls=10)[0]
    events += [
        SessionEvent(e.event_id + "b", e.subject, "s2", e.occurred_at, e.payload)
        for e in _conversation("new", calls=10, seed=9)[0]
    ]
    at_once = _records(events)
    half = len(events) // 2
    builders, _ = build_sessions(events[:half])
    states = [
        ThreadState.from_json(t.to_json()) for b in builders.values() for t in b.threads.values()
    ]
    _, first_turns = build_sessions(events[:half])
    _, later_turns = build_sessions(events[half:], states)
    by_thread = defaultdict(list)
    for new in first_turns + later_turns:
        by_thread[(new.correlation_id, new.thread)].append(new)
    for key, turns in by_thread.items():
        assert [t.index for t in turns] == list(range(len(turns))), key
    again, _ = build_sessions(events[half:], [ThreadState.from_json(s.to_json()) for s in states])
    rebuilt = []
    for corr, builder in sorted(again.items()):
        for name, state in sorted(builder.threads.items()):
            rebuilt += trajectory_records(state, [t.turn for t in by_thread[(corr, name)]])
    assert rebuilt == at_once


def test_parallel_workers_are_one_record_each_and_turns_keep_their_order() -> None:
    events = [e for e in sample_events(300, sessions=2, seed=4)]
    parsed = [
        SessionEvent(
            b["event_id"],
            b["subject"],
            b["correlation_id"],
            datetime.fromisoformat(b["occurred_at"]),
            b["payload"],
        )
        for b in (json.loads(e.body) for e in events)
    ]
    records = _records(parsed)
    assert {r["correlation_id"] for r in records} == {
        parsed[0].correlation_id,
        parsed[1].correlation_id,
    } or len({r["correlation_id"] for r in records}) == 2
    for record in records:
        messages = record["messages"]
        # Every tool turn answers a call made before it in the same record.
        asked: set[str] = set()
        for m in messages:
            asked |= {c["id"] for c in m["tool_calls"]}
            if m["role"] == "tool":
                assert m["tool_call_id"] in asked
        times = [record["first_at"], record["last_at"]]
        assert times == sorted(times)
        systems = [m for m in messages if m["role"] == "system"]
        assert len(systems) <= 1, "two conversations in one record"


def test_a_long_thread_becomes_parts_that_stay_put_as_it_grows() -> None:
    def events(rounds: int) -> list[SessionEvent]:
        out = [_chat(0, [{"role": "system", "content": "sys"}])]
        for n in range(rounds):
            out.append(_chat(len(out), [{"role": "user", "content": f"q{n}"}]))
            out.append(_chat(len(out), [{"role": "assistant", "content": f"a{n}"}]))
        return out

    def parts(rounds: int) -> list[dict]:
        builders, turns = build_sessions(events(rounds))
        (state,) = builders["s1"].threads.values()
        return trajectory_records(state, [t.turn for t in turns], max_turns=20)

    short, long = parts(30), parts(60)
    assert len(short) == 4 and len(long) == 7
    assert long[: len(short) - 1] == short[:-1]
    assert all(p["turns"] <= 21 for p in long)
    for p in long:
        assert p["messages"][0]["content"] == "sys"
        assert p["messages"][1]["role"] == "user"
