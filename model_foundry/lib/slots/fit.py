"""Which slots' context windows hold a request, before it is sent.

``fit_request`` renders the request for each slot that may serve its role (``render``:
system folding, plamo prompt, the slot's ``max_tokens``), counts its prompt tokens on that
slot's server and adds the answer's reserve; the slot's worker later sends that rendering as
it is, so what was counted is what is sent. Prompts whose upper-bound estimate already fits
with room to spare are not counted at all (no round trip); the rest are counted by the
server. A request is then sent only to slots it fits; one that fits none gets a reason a
person can act on, and is recorded as a failed, non-retried request instead of being sent
(and rejected) run after run.

A slot whose chat template drops the messages (``template_check.py``) holds nothing: its
role's requests go to the role's other slots, and one that only such slots could take is
recorded with that slot's sentence and ``TEMPLATE_IGNORES_MESSAGES``, never sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import Slot, SlotFile
from model_foundry.lib.slots.context import TEMPLATE_ALLOWANCE, ContextBook, surely_fits
from model_foundry.lib.slots.request import Rendered, render
from model_foundry.lib.slots.template_check import TEMPLATE_IGNORES_MESSAGES

PROMPT_TOO_LONG = "PromptTooLong"


@dataclass(frozen=True)
class Fit:
    """Where a request may go. ``only_slots`` None: every slot of its role (all fit, or
    their windows are unknown and the server will say)."""

    only_slots: tuple[str, ...] | None
    reason: str | None = None
    # What the reason is recorded as: PROMPT_TOO_LONG or TEMPLATE_IGNORES_MESSAGES.
    cause: str = PROMPT_TOO_LONG
    # The request as each slot that counted it is sent it (slots of a known window): counted
    # here, then sent as it is, so it is rendered once.
    rendered: Mapping[str, Rendered] = field(default_factory=dict)

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
    sent = render(slot, body, params, thinking=thinking)
    return book.count(slot, sent.counted).tokens, sent.reserve


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
    sent = render(slot, body, params, thinking=thinking)
    ok, counted = _measure(book, slot, window, sent)
    return ok, counted, sent.reserve


def _measure(book: ContextBook, slot: Slot, window: int, sent: Rendered) -> tuple[bool, int | None]:
    """(fits, prompt tokens or None when not counted) of ``sent`` in ``slot``'s ``window``:
    the server counts it unless even the upper-bound estimate fits."""
    if surely_fits(window, sent.counted, reserve=sent.reserve):
        return True, None
    counted = book.count(slot, sent.counted).tokens
    return counted + sent.reserve <= window, counted


def fit_request(
    book: ContextBook,
    slot_file: SlotFile,
    role: str,
    body: Body,
    params: Mapping[str, Any] | None = None,
    *,
    profile: str | None = None,
) -> Fit:
    """The slots of ``role`` whose windows hold the request, with its rendering for each slot
    whose window is known (the others render it when they send it)."""
    candidates = slot_file.slots_for_role(role, profile)
    thinking = slot_file.thinking_for_role(role)
    fitting: list[str] = []
    rendered: dict[str, Rendered] = {}
    largest: tuple[int, str] | None = None
    worst_prompt = 0
    reserve_seen = 0
    refused: list[str] = []
    for slot in candidates:
        window = book.context(slot.name).tokens
        template = book.template(slot.name)
        if template.refused:
            refused.append(template.detail)
            continue
        if window is None:
            fitting.append(slot.name)
            continue
        sent = render(slot, body, params, thinking=thinking)
        ok, counted = _measure(book, slot, window, sent)
        if ok:
            fitting.append(slot.name)
            rendered[slot.name] = sent
            continue
        assert counted is not None
        worst_prompt = max(worst_prompt, counted)
        reserve_seen = max(reserve_seen, sent.reserve)
        if largest is None or window > largest[0]:
            largest = (window, slot.name)
    if len(fitting) == len(candidates):
        return Fit(None, rendered=rendered)
    if fitting:
        return Fit(tuple(fitting), rendered=rendered)
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
