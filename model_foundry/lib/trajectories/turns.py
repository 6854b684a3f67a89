"""One turn of a trajectory, in OpenAI's chat shape, read from whatever a publisher sent.

A chat message's ``content`` may be a string, null or a list of parts; an assistant's
``tool_calls`` may carry ``arguments`` as a JSON string or as an object, and may lack an
``id``; reasoning comes as ``reasoning`` or ``reasoning_content``. :func:`turn_from_message`
reads all of these into one :class:`Turn`, with ``arguments`` always JSON text as OpenAI's
format has it.

A turn's :meth:`Turn.identity` is what makes two persisted copies of it the same turn: role,
content, tool calls (name and arguments compared as JSON values), ``tool_call_id`` and
``name``. Reasoning, slot and model are left out, since a publisher that sends the whole
conversation on every call often drops earlier turns' reasoning.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any


def arguments_text(value: Any) -> str:
    """Tool-call arguments as JSON text: a string is kept as sent, anything else encoded."""
    if isinstance(value, str):
        return value
    return json.dumps({} if value is None else value, ensure_ascii=False, sort_keys=True)


def canonical_arguments(value: Any) -> str:
    """The arguments as a canonical JSON value, so ``'{"a": 1}'`` and ``{"a": 1}`` match."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class ToolCall:
    """An assistant's call in OpenAI's shape: ``{id, type: function, function: {name,
    arguments}}`` with ``arguments`` as JSON text."""

    id: str
    name: str
    arguments: str

    def key(self) -> tuple[str, str]:
        """What a ``llm.tool_call`` event is matched by: tool name and arguments."""
        return self.name, canonical_arguments(self.arguments)

    def as_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Turn:
    """One message of a conversation and where it came from."""

    role: str
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    slot: str | None = None
    model: str | None = None
    event_id: str = ""
    occurred_at: datetime | None = None
    finish_reason: str | None = None
    tool_error: bool = False
    # "chat" for turns persisted in a conversation, "tool_event" for turns made from a
    # llm.tool_call event that no chat turn holds.
    origin: str = field(default="chat")

    def identity(self) -> str:
        calls = [c.key() for c in self.tool_calls]
        return _digest(
            self.role,
            self.content or "",
            json.dumps(calls, ensure_ascii=False),
            self.tool_call_id or "",
            self.name or "",
        )

    def with_source(self, **changes: Any) -> Turn:
        return replace(self, **changes)


def content_text(content: Any) -> str | None:
    """A message's content as text: a list of parts is joined from their ``text``."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str))
    return json.dumps(content, ensure_ascii=False)


def _tool_call(raw: Any, fallback_id: str) -> ToolCall | None:
    if not isinstance(raw, dict):
        return None
    function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return None
    raw_id = raw.get("id")
    call_id = raw_id if isinstance(raw_id, str) and raw_id else fallback_id
    return ToolCall(call_id, name, arguments_text(function.get("arguments")))


def turn_from_message(message: dict[str, Any], position: str) -> Turn:
    """A chat message as a :class:`Turn`; ``position`` names it for calls without an id (the
    same message persisted twice gets the same generated id)."""
    reasoning = message.get("reasoning")
    if not isinstance(reasoning, str):
        reasoning = message.get("reasoning_content")
    calls = []
    raw_calls = message.get("tool_calls")
    for n, raw in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        fallback = "call_" + _digest(position, str(n), json.dumps(raw, sort_keys=True, default=str))
        call = _tool_call(raw, fallback)
        if call is not None:
            calls.append(call)
    tool_call_id = message.get("tool_call_id")
    name = message.get("name")
    return Turn(
        role=str(message.get("role")),
        content=content_text(message.get("content")),
        tool_calls=tuple(calls),
        tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
        name=name if isinstance(name, str) else None,
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        finish_reason=message.get("finish_reason")
        if isinstance(message.get("finish_reason"), str)
        else None,
    )


def result_text(result: Any) -> str:
    """A tool result as the text of a ``tool`` turn."""
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, sort_keys=True)


def event_call_id(event_id: str) -> str:
    return "call_" + _digest("event", event_id)


__all__ = [
    "ToolCall",
    "Turn",
    "arguments_text",
    "canonical_arguments",
    "content_text",
    "event_call_id",
    "result_text",
    "turn_from_message",
]
