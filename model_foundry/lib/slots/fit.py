"""Which slots' context windows hold a request, before it is sent.

``fit_request`` renders the request exactly as the client would for each slot that may serve
its role (``build_request``: system folding, plamo prompt, the slot's ``max_tokens``), counts
its prompt tokens on that slot's server and adds the answer's reserve. Prompts whose
upper-bound estimate already fits with room to spare are not counted at all (no round trip);
the rest are counted by the server. A request is then sent only to slots it fits; one that
fits none gets a reason a person can act on, and is recorded as a failed, non-retried request
instead of being sent (and rejected) run after run.

A slot whose chat template drops the messages (``template_check.py``) holds nothing: its
role's requests go to the role's other slots, and one that only such slots could take is
recorded with that slot's sentence and ``TEMPLATE_IGNORES_MESSAGES``, never sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.client import build_request
from model_foundry.lib.slots.config import Slot, SlotFile
from model_foundry.lib.slots.context import ContextBook, answer_reserve, estimate_tokens
from model_foundry.lib.slots.template_check import TEMPLATE_IGNORES_MESSAGES

PROMPT_TOO_LONG = "PromptTooLong"
# Room left for what a chat template adds beyond the estimate's per-message tokens (some
# templates insert a default system text of a few dozen tokens), before a prompt is taken
# to fit without asking the server to count it.
TEMPLATE_ALLOWANCE = 256


@dataclass(frozen=True)
class Fit:
    """Where a request may go. ``only_slots`` None: every slot of its role (all fit, or
    their windows are unknown and the server will say)."""

    only_slots: tuple[str, ...] | None
    reason: str | None = None
    # What the reason is recorded as: PROMPT_TOO_LONG or TEMPLATE_IGNORES_MESSAGES.
    cause: str = PROMPT_TOO_LONG

    @property
    def fits(self) -> bool:
        return self.reason is None


def needed_tokens(
    book: ContextBook,
    slot: Slot,
    body: Body,
    params: Mapping[str, Any] | None = None,
    *,
    thinking: bool | None = None,
) -> tuple[int, int]:
    """(prompt tokens, answer reserve) of a request as ``slot`` would receive it."""
    rendered, reserve = _rendered(slot, body, params, thinking)
    return book.count(slot, rendered).tokens, reserve


def _rendered(
    slot: Slot, body: Body, params: Mapping[str, Any] | None, thinking: bool | None
) -> tuple[Body, int]:
    """(body, answer reserve) exactly as the client would send them to ``slot``: the chat
    messages after system folding, or the completions prompt."""
    req = build_request(slot, body, params, thinking=thinking)
    sent = Body(messages=req["messages"]) if "messages" in req else Body(prompt=req["prompt"])
    return sent, answer_reserve(req)


def surely_fits(window: int, body: Body, *, reserve: int) -> bool:
    """True when even the upper-bound estimate fits with ``TEMPLATE_ALLOWANCE`` to spare, so
    the server need not be asked to count (most prompts, in a window of several thousand)."""
    return estimate_tokens(body) + reserve + TEMPLATE_ALLOWANCE <= window


def fits_window(
    book: ContextBook,
    slot: Slot,
    window: int,
    body: Body,
    params: Mapping[str, Any] | None = None,
    *,
    thinking: bool | None = None,
) -> tuple[bool, int | None, int]:
    """(fits, prompt tokens or None when not counted, answer reserve) on ``slot``."""
    rendered, reserve = _rendered(slot, body, params, thinking)
    if surely_fits(window, rendered, reserve=reserve):
        return True, None, reserve
    counted = book.count(slot, rendered).tokens
    return counted + reserve <= window, counted, reserve


def fit_request(
    book: ContextBook,
    slot_file: SlotFile,
    role: str,
    body: Body,
    params: Mapping[str, Any] | None = None,
    *,
    profile: str | None = None,
) -> Fit:
    candidates = slot_file.slots_for_role(role, profile)
    thinking = slot_file.thinking_for_role(role)
    fitting: list[str] = []
    largest: tuple[int, str] | None = None
    worst_prompt = 0
    reserve_seen = 0
    refused: list[str] = []
    for slot in candidates:
        template = book.template(slot.name)
        if template.refused:
            refused.append(template.detail)
            continue
        window = book.context(slot.name).tokens
        if window is None:
            fitting.append(slot.name)
            continue
        ok, prompt_tokens, reserve = fits_window(
            book, slot, window, body, params, thinking=thinking
        )
        if ok:
            fitting.append(slot.name)
        else:
            assert prompt_tokens is not None
            worst_prompt = max(worst_prompt, prompt_tokens)
            reserve_seen = max(reserve_seen, reserve)
            if largest is None or window > largest[0]:
                largest = (window, slot.name)
    if len(fitting) == len(candidates):
        return Fit(None)
    if fitting:
        return Fit(tuple(fitting))
    if largest is None:
        # Every slot of the role was refused for its template.
        return Fit(None, reason="; ".join(refused), cause=TEMPLATE_IGNORES_MESSAGES)
    reason = (
        f"the prompt needs {worst_prompt} tokens plus {reserve_seen} for the answer, but the "
        f"largest context among the slots serving role {role!r} is {largest[0]} tokens "
        f"({largest[1]}); shorten the prompt or give a slot a larger context "
        "(llama.cpp -c / --parallel, vLLM --max-model-len)"
    )
    return Fit(None, reason=reason)


def role_window(
    book: ContextBook, slot_file: SlotFile, role: str, profile: str | None
) -> tuple[Slot, int] | None:
    """The slot of ``role``'s first tier with the smallest known window, and that window.

    Chunks sized for it fit every slot of the tier, so the work spreads over all of them.
    None when no window of the tier is known.
    """
    tiers = slot_file.role_tiers(role, profile)
    known = [
        (ctx, slot)
        for slot in (tiers[0] if tiers else [])
        if (ctx := book.context(slot.name).tokens) is not None
    ]
    if not known:
        return None
    ctx, slot = min(known, key=lambda pair: pair[0])
    return slot, ctx


__all__ = [
    "PROMPT_TOO_LONG",
    "TEMPLATE_ALLOWANCE",
    "Fit",
    "fit_request",
    "fits_window",
    "needed_tokens",
    "role_window",
    "surely_fits",
]
