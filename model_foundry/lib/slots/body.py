"""What a request asks the model, as one value: chat ``messages``, a raw ``prompt``, or a
``text`` to translate.

A ``Body`` travels unchanged from the work that asks (``lib/llm``'s ``Request``) through
fitting, the dispatcher's ``Task`` and the slot client to the runtime that counts its tokens;
each of them decides from the one value how to render it for its slot. Exactly one of the
three is set, so no layer has to guess which one wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

BodyKind = Literal["messages", "prompt", "text"]
_KINDS: tuple[BodyKind, ...] = ("messages", "prompt", "text")


@dataclass(frozen=True)
class Body:
    """One of ``messages``, ``prompt`` or ``text``: write ``Body(messages=[...])``."""

    messages: list[dict[str, Any]] | None = None
    # Raw completions prompt, or a one-turn chat prompt on a chat slot.
    prompt: str | None = None
    # The text to translate (translator slots; a chat slot is asked for a translation).
    text: str | None = None

    def __post_init__(self) -> None:
        given = [k for k in _KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            named = ", ".join(given) or "none"
            raise ValueError(
                f"a request body needs exactly one of messages, prompt, text ({named})"
            )

    @property
    def kind(self) -> BodyKind:
        if self.messages is not None:
            return "messages"
        return "prompt" if self.prompt is not None else "text"

    @property
    def raw(self) -> str | None:
        """The string of a ``prompt`` or ``text`` body; None for chat messages."""
        return self.prompt if self.prompt is not None else self.text

    def as_dict(self) -> dict[str, Any]:
        """All three fields, unset ones None: the spelling request keys and the store use."""
        return {"messages": self.messages, "prompt": self.prompt, "text": self.text}


__all__ = ["Body", "BodyKind"]
