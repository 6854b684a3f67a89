"""Realistic sample events for every subject: agent sessions with chat turns, tool runs,
lineage and searches, for ``model-foundry publish --sample``, the demo, the benches and the
tests. The conversations themselves come from ``sample_sessions.py``.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from model_foundry.devtools.sample_sessions import TOOLS_SCHEMA, Worker, planted_secrets
from model_foundry.lib.events import CHAT_PERSIST, FLOW_LINEAGE, SEMANTIC_SEARCH, TOOL_CALL
from model_foundry.lib.publish import OutgoingEvent, make_event

_TOOLS = ["read_file", "run_tests", "grep", "obsidian.search", "git_diff"]
# The slots the familiar's own turns name, as in the lab's run that taught its lesson: the
# orchestrator never routed a turn to kindergarten, so it does not appear here at all.
_SLOTS = [
    ("naughty", "gemma-4-31b-it"),
    ("naughty", "gemma-4-31b-it-nvfp4"),
    ("grandpa", "glm-5.1"),
]
_WORKERS = 3
_STEPS_PER_ROUND = 4


def _lineage(session: str, coordinated: bool) -> Iterator[dict[str, Any]]:
    """One session's lineage, event by event: a plan, then three workers side by side.

    Each worker's steps alternate chat turns (on naughty) and tool calls, and the workers take
    turns in time, so their branches interleave. In a coordinated session each step also
    reads a neighbour's previous one and a review joins the round; in an uncoordinated one
    the workers never meet again.
    """
    who = {"slot": "naughty", "role": "worker", "model": "gemma-4-31b-it-nvfp4"}
    for rnd in itertools.count():
        plan = f"{session}/plan-{rnd}"
        yield {"kind": "node", "node_id": plan, "label": "plan", **who}
        if rnd:
            yield {"kind": "edge", "source": f"{session}/review-{rnd - 1}", "target": plan}
        last = [plan] * _WORKERS
        steps = itertools.count() if not coordinated else range(_STEPS_PER_ROUND)
        for step in steps:
            for w in range(_WORKERS):
                node = f"{session}/r{rnd}-w{w}-{step}"
                chat = step % 2 == 0
                extra = who if chat else {}
                label = "chat" if chat else "tool_call"
                # The edge first, as the familiar sends it when a step starts.
                yield {"kind": "edge", "source": last[w], "target": node}
                yield {"kind": "node", "node_id": node, "label": label, **extra}
                if coordinated and step:
                    # A hand-off: each worker also reads its neighbour's previous step.
                    peer = f"{session}/r{rnd}-w{(w + 1) % _WORKERS}-{step - 1}"
                    yield {"kind": "edge", "source": peer, "target": node}
                last[w] = node
        review = f"{session}/review-{rnd}"
        yield {"kind": "node", "node_id": review, "label": "review", **who}
        for end in last:
            yield {"kind": "edge", "source": end, "target": review}


class AgentSession:
    """A sample session's two workers: the next LLM call's payload or tool run's event."""

    def __init__(self, session: str, style: str, rng: random.Random, planted: bool) -> None:
        self.style = style
        secrets = planted_secrets(rng) if planted else None
        self.workers = [
            Worker(
                session, f"w{n}", random.Random(rng.getrandbits(64)), secrets if n == 0 else None
            )
            for n in range(2)
        ]
        self.calls = 0

    def chat(self, rng: random.Random) -> dict[str, Any]:
        worker = self.workers[self.calls % len(self.workers)]
        self.calls += 1
        slot, model = rng.choice(_SLOTS)
        reasoning = "reasoning_content" if slot == "grandpa" else rng.choice(["reasoning", None])
        worker.next_call(reasoning)
        payload: dict[str, Any] = {
            "messages": worker.persisted(self.style),
            "model": model,
            "slot": slot,
            "tools": TOOLS_SCHEMA,
            "usage": {
                "prompt_tokens": rng.randint(20, 400),
                "completion_tokens": rng.randint(10, 300),
            },
        }
        if not payload["messages"][-1].get("tool_calls") and rng.random() < 0.1:
            payload["finish_reason"] = "length"
        if self.style == "new":
            payload.update(thread_id=worker.thread_id, worker=worker.name)
        return payload

    def tool_event(self, rng: random.Random, i: int) -> dict[str, Any]:
        """The oldest tool run not yet reported; with none, one the orchestrator ran itself
        (no chat turn holds it: the trajectory gets it as a call of its own)."""
        for worker in self.workers:
            if worker.runs:
                run = worker.runs.popleft()
                return {
                    "tool": run.name,
                    "arguments": run.arguments,
                    "result": run.result,
                    "status": run.status,
                    "duration_ms": rng.randint(3, 4000),
                }
        ok = rng.random() > 0.1
        return {
            "tool": rng.choice(_TOOLS),
            "arguments": {"path": f"model_foundry/module_{i % 7}.py"},
            "result": "ok" if ok else "exit status 1",
            "status": "ok" if ok else "error",
            "duration_ms": rng.randint(3, 4000),
        }


def _agents(rng: random.Random, sessions: int) -> tuple[str, dict[str, AgentSession]]:
    """The run's tag and its sessions' agents, drawn first from the stream's ``rng``."""
    run_tag = uuid.UUID(int=rng.getrandbits(128)).hex[:8]
    session_ids = [f"sess-{run_tag}-{i:03d}" for i in range(max(1, sessions))]
    # Sessions alternate the two persistence styles; every other one holds planted secrets.
    agents = {
        s: AgentSession(s, "whole" if n % 2 == 0 else "new", rng, planted=n % 2 == 0)
        for n, s in enumerate(session_ids)
    }
    return run_tag, agents


def planted_secrets_of(*, sessions: int = 5, seed: int = 7) -> list[dict[str, str]]:
    """The fake secrets and personal data ``sample_events(..., sessions=, seed=)`` plants,
    one dict per planted session: what must never be found outside DuckDB."""
    _, agents = _agents(random.Random(seed), sessions)
    return [w.secrets for a in agents.values() for w in a.workers if w.secrets]


def sample_events(count: int, *, sessions: int = 5, seed: int = 7) -> Iterator[OutgoingEvent]:
    """``count`` contract-valid events spread over every subject and ``sessions`` sessions."""
    rng = random.Random(seed)
    run_tag, agents = _agents(rng, sessions)
    session_ids = list(agents)
    start = datetime.now(UTC) - timedelta(minutes=count)
    subjects = [CHAT_PERSIST, CHAT_PERSIST, TOOL_CALL, FLOW_LINEAGE, SEMANTIC_SEARCH]
    # Every other session's workers never meet again: uncoordinated parallel work.
    lineage = {s: _lineage(s, coordinated=n % 2 == 1) for n, s in enumerate(session_ids)}
    for i in range(count):
        # The session moves on by one with each round of subjects, so every session gets
        # every subject whatever the number of sessions (i % sessions alone gave five
        # sessions one subject each).
        block, slot_in_block = divmod(i, len(subjects))
        session = session_ids[(block + slot_in_block) % len(session_ids)]
        subject = subjects[slot_in_block]
        when = start + timedelta(seconds=i)
        if subject == CHAT_PERSIST:
            payload = agents[session].chat(rng)
            if i % 7 == 0:
                # Some familiar builds name only the model: routing maps it to a slot.
                del payload["slot"]
        elif subject == TOOL_CALL:
            payload = agents[session].tool_event(rng, i)
        elif subject == FLOW_LINEAGE:
            payload = next(lineage[session])
        else:
            payload = {
                "query": rng.choice(
                    ["DuckDB ロック", "JetStream consumers", "slot throughput", "翻訳 品質"]
                ),
                "results": [
                    {
                        "path": f"notes/{rng.choice(['infra', 'ml', 'daily'])}/{i}.md",
                        "score": round(rng.random(), 3),
                    }
                    for _ in range(rng.randint(0, 3))
                ],
            }
        yield make_event(subject, payload, session, event_id=f"{run_tag}-{i:08d}", occurred_at=when)


__all__ = ["AgentSession", "planted_secrets_of", "sample_events"]
