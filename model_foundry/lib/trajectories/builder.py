"""Inbox events -> the turns of each session's threads, in order, no turn twice.

Publishers persist a conversation in one of two styles, and a session may mix them:

- **whole conversation**: every LLM call sends all messages so far; the part of a snapshot
  that is new is what follows the longest thread whose turns it starts with;
- **new turns only**: every call sends just what was added; those turns extend the thread.

Threads: a session's parallel workers are separate conversations, so a record is one thread.
A payload that names its thread (``thread_id`` or ``worker``) goes to that thread. Otherwise a
snapshot that extends a thread goes there, one that opens like a known thread but then
differs (the same system prompt, another task), or that opens with a system turn nobody has,
starts a new thread, and new turns go to the thread that last grew (``main`` at first).

``llm.tool_call`` events: one whose call (tool name and arguments, or its ``tool_call_id``)
an assistant turn of the session already holds is matched to it and only adds lineage; any
other becomes an assistant tool call and its ``tool`` turn, appended where it happened. When
the thread's next chat event then brings that call (an assistant turn of only such calls,
and the ``tool`` turn answering it), those chat turns are the ones already added and are not
added again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from model_foundry.lib.events import CHAT_PERSIST, TOOL_CALL
from model_foundry.lib.trajectories.calls import add_tools, answer, made_from_events
from model_foundry.lib.trajectories.state import CallState, ThreadState
from model_foundry.lib.trajectories.turns import (
    ToolCall,
    Turn,
    arguments_text,
    canonical_arguments,
    event_call_id,
    result_text,
    turn_from_message,
)

MAIN_THREAD = "main"
_ERROR_STATUSES = {"error", "failed", "failure"}


@dataclass(frozen=True)
class SessionEvent:
    """An inbox event as the builder reads it: its payload already parsed."""

    event_id: str
    subject: str
    correlation_id: str
    occurred_at: datetime
    payload: dict[str, Any]


@dataclass(frozen=True)
class NewTurn:
    """A turn to store: its session, thread and place in the thread."""

    correlation_id: str
    thread: str
    index: int
    turn: Turn


def _named_thread(payload: dict[str, Any]) -> str | None:
    for key in ("thread_id", "worker"):
        value = payload.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def _starts_with(seq: list[str], prefix: list[str]) -> bool:
    return len(prefix) <= len(seq) and seq[: len(prefix)] == prefix


class SessionBuilder:
    """One session's threads; :meth:`add` returns the turns an event adds."""

    def __init__(self, correlation_id: str, threads: Iterable[ThreadState] = ()) -> None:
        self.correlation_id = correlation_id
        self.threads: dict[str, ThreadState] = {t.thread: t for t in threads}
        self.current: str | None = self._latest() if self.threads else None

    def _latest(self) -> str:
        return max(
            self.threads.values(), key=lambda t: (t.last_at or datetime.min, t.thread)
        ).thread

    def _thread(self, name: str) -> ThreadState:
        if name not in self.threads:
            self.threads[name] = ThreadState(self.correlation_id, name)
        return self.threads[name]

    def _new_thread_name(self) -> str:
        if MAIN_THREAD not in self.threads:
            return MAIN_THREAD
        n = len(self.threads) + 1
        while f"thread-{n}" in self.threads:
            n += 1
        return f"thread-{n}"

    def add(self, event: SessionEvent) -> list[NewTurn]:
        if event.subject == CHAT_PERSIST:
            return self._chat(event)
        if event.subject == TOOL_CALL:
            return self._tool_event(event)
        return []

    # -- chat events --------------------------------------------------------------------------

    def _place(
        self, payload: dict[str, Any], ids: list[str], opens_with_system: bool
    ) -> tuple[str, int]:
        """The thread a chat event goes to, and how many of its messages that thread has."""
        named = _named_thread(payload)
        if named is not None:
            known = self.threads.get(named)
            have = known.chat_identities if known else []
            if _starts_with(ids, have):
                return named, len(have)
            return named, len(ids) if _starts_with(have, ids) else 0
        extends = [
            t
            for t in self.threads.values()
            if t.chat_identities and _starts_with(ids, t.chat_identities)
        ]
        if extends:
            best = max(extends, key=lambda t: len(t.chat_identities))
            return best.thread, len(best.chat_identities)
        for t in self.threads.values():
            if _starts_with(t.chat_identities, ids):
                return t.thread, len(ids)  # a shorter copy of what the thread has: nothing new
        forks = any(t.chat_identities[:1] == ids[:1] for t in self.threads.values())
        if self.threads and (forks or opens_with_system):
            return self._new_thread_name(), 0
        return self.current or MAIN_THREAD, 0

    def _chat(self, event: SessionEvent) -> list[NewTurn]:
        payload = event.payload
        raw = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
        turns = [
            turn_from_message(m, f"{event.correlation_id}/{event.event_id}/{n}")
            for n, m in enumerate(raw)
        ]
        ids = [t.identity() for t in turns]
        opens_with_system = bool(turns) and turns[0].role == "system"
        name, have = self._place(payload, ids, opens_with_system)
        thread = self._thread(name)
        self.current = name
        thread.saw(event.event_id, event.occurred_at)
        add_tools(thread, payload.get("tools"))
        fresh = turns[have:]
        slot = payload.get("slot") if isinstance(payload.get("slot"), str) else None
        model = payload.get("model") if isinstance(payload.get("model"), str) else None
        finish = (
            payload.get("finish_reason") if isinstance(payload.get("finish_reason"), str) else None
        )
        out = []
        for n, turn in enumerate(fresh):
            thread.chat_identities.append(ids[have + n])
            if made_from_events(thread, turn):
                continue
            if turn.role == "assistant":
                last = n == len(fresh) - 1
                turn = turn.with_source(
                    slot=slot,
                    model=model,
                    finish_reason=turn.finish_reason or (finish if last else None),
                )
                thread.wrote(slot, model)
                thread.calls += [CallState(c.id, c.name, c.arguments) for c in turn.tool_calls]
            elif turn.role == "tool":
                turn = answer(thread, turn)
            turn = turn.with_source(event_id=event.event_id, occurred_at=event.occurred_at)
            out.append(self._append(thread, turn))
        # Only the chat event right after a tool event may bring its call: later ones that
        # call the same tool with the same arguments made a call of their own.
        for call in thread.calls:
            call.claimed = call.claimed or call.from_event
        return out

    def _append(self, thread: ThreadState, turn: Turn) -> NewTurn:
        new = NewTurn(self.correlation_id, thread.thread, thread.turns, turn)
        thread.turns += 1
        return new

    # -- tool events --------------------------------------------------------------------------

    def _tool_event(self, event: SessionEvent) -> list[NewTurn]:
        payload = event.payload
        tool = str(payload.get("tool") or "")
        arguments = payload.get("arguments")
        status = payload.get("status")
        error = isinstance(status, str) and status.lower() in _ERROR_STATUSES
        named = _named_thread(payload)
        call_id = payload.get("tool_call_id")
        key = (tool, canonical_arguments(arguments))
        order = sorted(self.threads.values(), key=lambda t: t.last_at or datetime.min, reverse=True)
        if named is not None:
            order = [t for t in order if t.thread == named]
        for thread in order:
            for call in thread.calls:
                if call.matched:
                    continue
                if call.id == call_id or (call.name, canonical_arguments(call.arguments)) == key:
                    call.matched = True
                    self._tool_lineage(thread, event, error, matched=True)
                    return []
        thread = self._thread(named or self.current or MAIN_THREAD)
        self.current = thread.thread
        self._tool_lineage(thread, event, error, matched=False)
        call = ToolCall(
            call_id if isinstance(call_id, str) and call_id else event_call_id(event.event_id),
            tool,
            arguments_text(arguments),
        )
        thread.calls.append(
            CallState(call.id, call.name, call.arguments, True, True, from_event=True)
        )
        where = {
            "event_id": event.event_id,
            "occurred_at": event.occurred_at,
            "origin": "tool_event",
        }
        asked = Turn(role="assistant", content=None, tool_calls=(call,), **where)
        answered = Turn(
            role="tool",
            content=result_text(payload.get("result", "")),
            tool_call_id=call.id,
            name=tool,
            tool_error=error,
            **where,
        )
        return [self._append(thread, asked), self._append(thread, answered)]

    @staticmethod
    def _tool_lineage(thread: ThreadState, event: SessionEvent, error: bool, matched: bool) -> None:
        thread.saw(event.event_id, event.occurred_at)
        thread.tool_events += 1
        thread.tool_events_matched += matched
        thread.tool_errors += error


def build_sessions(
    events: Iterable[SessionEvent], states: Iterable[ThreadState] = ()
) -> tuple[dict[str, SessionBuilder], list[NewTurn]]:
    """Apply ``events`` (in time order) to the sessions' stored ``states``: the builders after
    them and every new turn. Events of one time keep the order given (their commit order)."""
    builders: dict[str, SessionBuilder] = {}
    by_session: dict[str, list[ThreadState]] = {}
    for state in states:
        by_session.setdefault(state.correlation_id, []).append(state)
    for corr, threads in by_session.items():
        builders[corr] = SessionBuilder(corr, threads)
    turns: list[NewTurn] = []
    for event in sorted(events, key=lambda e: e.occurred_at):
        builder = builders.get(event.correlation_id)
        if builder is None:
            builder = builders[event.correlation_id] = SessionBuilder(event.correlation_id)
        turns += builder.add(event)
    return builders, turns


__all__ = ["MAIN_THREAD", "NewTurn", "SessionBuilder", "SessionEvent", "build_sessions"]
