"""What a session's threads remember between runs, so new events extend them incrementally.

A :class:`ThreadState` holds no turns, only what the next event needs: the identities of the
thread's chat turns (to find the part of a whole-conversation snapshot that is new), its tool
calls (to match ``llm.tool_call`` events), its tools schema and its lineage. It is stored as
JSON beside the thread's row, so extending a session reads that row, not its history.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class CallState:
    """A tool call the thread's assistant made, and whether a tool event was matched to it."""

    id: str
    name: str
    arguments: str
    matched: bool = False
    answered: bool = False
    # Made from a tool event no chat turn held (yet); claimed once a chat turn brings it.
    from_event: bool = False
    claimed: bool = False


@dataclass
class ThreadState:
    """One conversation thread of a session (a worker's, or the session's only one)."""

    correlation_id: str
    thread: str
    turns: int = 0
    chat_identities: list[str] = field(default_factory=list)
    calls: list[CallState] = field(default_factory=list)
    tools: dict[str, Any] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)
    event_ids: list[str] = field(default_factory=list)
    first_at: datetime | None = None
    last_at: datetime | None = None
    tool_events: int = 0
    tool_events_matched: int = 0
    tool_errors: int = 0
    # A chat call id -> the id of the call made earlier from its tool event.
    aliases: dict[str, str] = field(default_factory=dict)

    def saw(self, event_id: str, occurred_at: datetime) -> None:
        if not self.event_ids or self.event_ids[-1] != event_id:
            self.event_ids.append(event_id)
        if self.first_at is None or occurred_at < self.first_at:
            self.first_at = occurred_at
        if self.last_at is None or occurred_at > self.last_at:
            self.last_at = occurred_at

    def wrote(self, slot: str | None, model: str | None) -> None:
        if slot and slot not in self.slots:
            self.slots.append(slot)
        if model and model not in self.models:
            self.models.append(model)

    def tools_schema(self) -> list[Any]:
        """The tools the thread's calls offered, one per function name, in first-seen order."""
        return list(self.tools.values())

    def to_json(self) -> str:
        body = asdict(self)
        for key in ("first_at", "last_at"):
            body[key] = body[key].isoformat() if body[key] else None
        return json.dumps(body, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> ThreadState:
        body = json.loads(text)
        body["calls"] = [CallState(**c) for c in body.get("calls", [])]
        for key in ("first_at", "last_at"):
            body[key] = datetime.fromisoformat(body[key]) if body.get(key) else None
        return cls(**body)


__all__ = ["CallState", "ThreadState"]
