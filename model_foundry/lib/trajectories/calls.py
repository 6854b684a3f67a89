"""What a thread's calls need: tools schemas kept, tool turns tied to their calls, and chat
turns recognised as the ones a tool event already made (``builder.py`` says when)."""

from __future__ import annotations

from typing import Any

from model_foundry.lib.trajectories.state import ThreadState
from model_foundry.lib.trajectories.turns import Turn, canonical_arguments


def add_tools(thread: ThreadState, tools: Any) -> None:
    """The events' tools schemas, one per function name (the newest wins)."""
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = function.get("name")
        if isinstance(name, str) and name:
            thread.tools[name] = tool


def answer(thread: ThreadState, turn: Turn) -> Turn:
    """A chat ``tool`` turn answers a call: the one it names, else the first open one of
    the same tool (publishers that leave out ``tool_call_id``)."""
    for call in thread.calls:
        if call.answered:
            continue
        if turn.tool_call_id == call.id or (
            turn.tool_call_id is None and (turn.name in (None, call.name))
        ):
            call.answered = True
            return turn.with_source(tool_call_id=call.id, name=turn.name or call.name)
    return turn


def made_from_events(thread: ThreadState, turn: Turn) -> bool:
    """Whether a chat turn is already in the thread because its tool events came first:
    an assistant turn of only calls that events made, or the tool turn answering one."""
    if turn.role == "tool":
        return turn.tool_call_id is not None and turn.tool_call_id in thread.aliases
    if turn.role != "assistant" or not turn.tool_calls or (turn.content or "").strip():
        return False
    open_calls = [c for c in thread.calls if c.from_event and not c.claimed]
    claims = {}
    for call in turn.tool_calls:
        found = next(
            (c for c in open_calls if c.id not in claims.values() and
             (c.name, canonical_arguments(c.arguments)) == call.key()),
            None,
        )  # fmt: skip
        if found is None:
            return False
        claims[call.id] = found.id
    for state in open_calls:
        state.claimed = state.claimed or state.id in claims.values()
    thread.aliases.update(claims)
    return True


__all__ = ["add_tools", "answer", "made_from_events"]
