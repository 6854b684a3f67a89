"""A thread's stored turns -> its trajectory record(s), the rows a dataset export writes.

A record is one thread of one session, its turns in order with the slot and model that wrote
each assistant turn, the thread's tools schema and its lineage (correlation id, event ids,
first and last event time). A thread longer than ``max_turns`` becomes parts of at most that
many turns, cut before a user turn when the second half of the part has one (else before an
assistant turn that follows no open tool call), each later part opening with the thread's
system turns again. The cuts depend only on the turns before them, so a thread that grows
keeps its earlier parts as they were.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from model_foundry.lib.trajectories.state import ThreadState
from model_foundry.lib.trajectories.turns import Turn

DEFAULT_MAX_TURNS = 200


def message(turn: Turn) -> dict[str, Any]:
    """A turn with every key a record's messages have, so all rows share one schema."""
    return {
        "role": turn.role,
        "content": turn.content,
        "reasoning": turn.reasoning,
        "tool_calls": [c.as_openai() for c in turn.tool_calls],
        "tool_call_id": turn.tool_call_id,
        "name": turn.name,
        "slot": turn.slot,
        "model": turn.model,
    }


@dataclass(frozen=True)
class Flags:
    """What a record's turns show about its quality; exports flag, filters may drop."""

    empty_turns: int
    truncated_turns: int
    tool_errors: int

    @classmethod
    def of(cls, turns: Sequence[Turn]) -> Flags:
        return cls(
            empty_turns=sum(
                t.role == "assistant" and not (t.content or "").strip() and not t.tool_calls
                for t in turns
            ),
            truncated_turns=sum(t.finish_reason == "length" for t in turns),
            tool_errors=sum(t.tool_error for t in turns),
        )


def _cuts(turns: Sequence[Turn], max_turns: int) -> list[int]:
    """Where parts start: 0, then each cut, as said in the module docstring."""
    cuts, start = [0], 0
    while len(turns) - start > max_turns:
        end = start + max_turns
        cut = end
        for i in range(end, start + max_turns // 2, -1):
            if turns[i].role == "user":
                cut = i
                break
        else:
            for i in range(end, start + max_turns // 2, -1):
                if turns[i].role == "assistant" and not turns[i - 1].tool_calls:
                    cut = i
                    break
        cuts.append(cut)
        start = cut
    return cuts


def trajectory_records(
    state: ThreadState, turns: Sequence[Turn], max_turns: int = DEFAULT_MAX_TURNS
) -> list[dict[str, Any]]:
    """The records of one thread (see the module docstring); ``turns`` in thread order."""
    system = [
        t for t in turns[: next((i for i, t in enumerate(turns) if t.role != "system"), len(turns))]
    ]
    cuts = _cuts(turns, max(max_turns, len(system) + 2))
    records = []
    for part, start in enumerate(cuts):
        end = cuts[part + 1] if part + 1 < len(cuts) else len(turns)
        body = list(turns[start:end])
        if part and system:
            body = system + body
        flags = Flags.of(body)
        record_id = f"{state.correlation_id}/{state.thread}" + (f"/{part + 1}" if part else "")
        event_ids = list(dict.fromkeys(t.event_id for t in body if t.event_id))
        times = [t.occurred_at for t in body if t.occurred_at is not None]
        records.append(
            {
                "id": record_id,
                "correlation_id": state.correlation_id,
                "thread": state.thread,
                "part": part + 1,
                "messages": [message(t) for t in body],
                "tools": json.dumps(state.tools_schema(), ensure_ascii=False),
                "models": sorted({t.model for t in body if t.model}),
                "slots": sorted({t.slot for t in body if t.slot}),
                "event_ids": event_ids,
                "first_at": min(times).isoformat() if times else None,
                "last_at": max(times).isoformat() if times else None,
                "turns": len(body),
                "empty_turns": flags.empty_turns,
                "truncated_turns": flags.truncated_turns,
                "tool_errors": flags.tool_errors,
            }
        )
    return records


__all__ = ["DEFAULT_MAX_TURNS", "Flags", "message", "trajectory_records"]
