"""Which slot did what share of the sessions' work, and which live slot was left idle.

The familiar's own chat turns (``llm.chat.persist`` events, one turn each) name the ``slot``
that answered, or at least the ``model``. :func:`slot_for` maps a turn to a slot of the slot
file (its slot name first, else its model), and turns that name no known slot go to the
``unknown`` bucket, so each session's shares add up to 1. :func:`routing_verdict` carries the
lab's lesson: a worker slot that is live in the active profile and serves chat, but got no
turns across the last sessions, is named in one sentence. Pure logic: no DuckDB, no Dagster.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import PurePosixPath

from model_foundry.lib.slots.config import Slot, SlotFile
from model_foundry.lib.tables.sessions import SessionRoutingRow

UNKNOWN_SLOT = "unknown"


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """One chat turn of a session: one ``llm.chat.persist`` event."""

    correlation_id: str
    occurred_at: datetime
    slot: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _model_stem(model: str) -> str:
    # llama.cpp reports the model file path as its id: compare the file's stem.
    name = PurePosixPath(model.replace("\\", "/")).name.lower()
    return name.removesuffix(".gguf")


def slot_for(turn: ChatTurn, slot_file: SlotFile) -> str:
    """The slot file's slot that answered ``turn``, or ``unknown``.

    The turn's ``slot`` wins when the slot file has it. Otherwise its ``model`` is matched to
    the slots' models: the same name, or (when exactly one slot fits) one name extending the
    other, as a quantisation suffix does (``gemma-4-31b-it`` and ``gemma-4-31b-it-nvfp4``).
    """
    if turn.slot and turn.slot in slot_file.slots:
        return turn.slot
    if not turn.model:
        return UNKNOWN_SLOT
    wanted = _model_stem(turn.model)
    stems = {name: _model_stem(s.model) for name, s in slot_file.slots.items()}
    exact = [name for name, stem in stems.items() if stem == wanted]
    if len(exact) == 1:
        return exact[0]
    near = [n for n, stem in stems.items() if stem.startswith(wanted) or wanted.startswith(stem)]
    return near[0] if len(near) == 1 else UNKNOWN_SLOT


def unknown_slot_names(turns: Iterable[ChatTurn], slot_file: SlotFile) -> list[str]:
    """Slot names that chat turns carry but the slot file does not define."""
    return sorted({t.slot for t in turns if t.slot and t.slot not in slot_file.slots})


def _describe(name: str, slot_file: SlotFile) -> tuple[tuple[str, ...], str | None]:
    slot: Slot | None = slot_file.slots.get(name)
    if slot is None:
        return (), None
    return tuple(slot.all_roles), slot.model


def session_shares(turns: Iterable[ChatTurn], slot_file: SlotFile) -> list[SessionRoutingRow]:
    """The ``session_routing`` rows of ``turns``' sessions: per session, day and slot, the
    turns, their tokens and their share of the session's turns (a session's shares sum to 1)."""
    groups: dict[tuple[str, date, str], list[ChatTurn]] = defaultdict(list)
    per_session: Counter[str] = Counter()
    last_at: dict[str, datetime] = {}
    for turn in turns:
        groups[(turn.correlation_id, turn.occurred_at.date(), slot_for(turn, slot_file))].append(
            turn
        )
        per_session[turn.correlation_id] += 1
        seen = last_at.get(turn.correlation_id, turn.occurred_at)
        last_at[turn.correlation_id] = max(seen, turn.occurred_at)
    rows = []
    for (session, day, slot), members in sorted(groups.items()):
        roles, model = _describe(slot, slot_file)
        if slot == UNKNOWN_SLOT:
            models = Counter(t.model for t in members if t.model)
            model = models.most_common(1)[0][0] if models else None
        named = tuple(unknown_slot_names(members, slot_file))
        rows.append(
            SessionRoutingRow(
                correlation_id=session,
                day=day,
                slot=slot,
                roles=roles,
                model=model,
                turns=len(members),
                prompt_tokens=sum(t.prompt_tokens or 0 for t in members),
                completion_tokens=sum(t.completion_tokens or 0 for t in members),
                share=len(members) / per_session[session],
                session_turns=per_session[session],
                session_last_at=last_at[session],
                named_as=named,
            )
        )
    return rows


def watched_slots(slot_file: SlotFile, profile: str | None = None) -> list[Slot]:
    """The worker slots the check watches: live in the profile, serving chat.

    A completions-only slot (the translator) never answers a session's turn, so its silence
    says nothing about routing.
    """
    return [s for s in slot_file.live_slots(profile) if s.api == "chat"]


@dataclass(frozen=True, slots=True)
class RoutingVerdict:
    """How the last sessions' turns spread over the watched slots."""

    profile: str
    sessions: int
    turns: int
    turns_by_slot: dict[str, int]
    idle: tuple[str, ...]
    unknown_names: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.idle and not self.unknown_names

    def warnings(self) -> list[str]:
        """One sentence per problem: idle live slots, slot names the slot file lacks."""
        out = []
        if self.idle:
            out.append(idle_sentence(self))
        if self.unknown_names:
            names = ", ".join(self.unknown_names)
            out.append(
                f"chat turns name slot{'s' if len(self.unknown_names) > 1 else ''} {names}, "
                "missing from the slot file; their turns count as unknown"
            )
        return out


def _percent(part: int, whole: int) -> str:
    value = 100 * part / whole if whole else 0.0
    return f"{value:.0f}%" if value == round(value) or value >= 10 else f"{value:.1f}%"


def idle_sentence(verdict: RoutingVerdict) -> str:
    """E.g. ``the orchestrator routed 0 of 1,284 agent turns to kindergarten (live in profile
    standard) in the last 20 sessions; naughty took 100%``.

    The turns are the agent orchestrator's (which slot it sent each agent turn to), not
    model-foundry's own requests: the sentence names them so, beside a slot's summary and
    translation counts, it does not read as a contradiction."""
    idle = " or ".join(verdict.idle)
    busy = sorted(
        ((n, c) for n, c in verdict.turns_by_slot.items() if c > 0), key=lambda nc: (-nc[1], nc[0])
    )
    # "naughty took 70%, grandpa 30%": the verb once, after the busiest slot.
    parts = [f"{name} {_percent(count, verdict.turns)}" for name, count in busy]
    took = ", ".join(parts).replace(" ", " took ", 1) if parts else ""
    plural = "s" if verdict.sessions != 1 else ""
    sentence = (
        f"the orchestrator routed 0 of {verdict.turns:,} agent turns to {idle} "
        f"(live in profile {verdict.profile}) in the last {verdict.sessions:,} session{plural}"
    )
    return f"{sentence}; {took}" if took else sentence


def verdict_from_counts(
    turns_by_slot: dict[str, int],
    sessions: int,
    unknown_names: Iterable[str],
    slot_file: SlotFile,
    profile: str | None = None,
) -> RoutingVerdict:
    """The verdict over turns already counted per slot (``unknown`` included)."""
    name = slot_file.resolve_profile(profile)
    watched = [s.name for s in watched_slots(slot_file, name)]
    by_slot = {n: turns_by_slot.get(n, 0) for n in watched}
    for other, count in turns_by_slot.items():
        by_slot.setdefault(other, count)
    total = sum(by_slot.values())
    return RoutingVerdict(
        profile=name,
        sessions=sessions,
        turns=total,
        turns_by_slot=by_slot,
        # Without any turn there is nothing to say about routing.
        idle=tuple(n for n in watched if by_slot[n] == 0) if total else (),
        unknown_names=tuple(sorted(set(unknown_names))),
    )


def routing_verdict(
    turns: Sequence[ChatTurn], slot_file: SlotFile, profile: str | None = None
) -> RoutingVerdict:
    """The verdict over ``turns`` (the last sessions' turns, chosen by the caller)."""
    counts = Counter(slot_for(t, slot_file) for t in turns)
    return verdict_from_counts(
        dict(counts),
        len({t.correlation_id for t in turns}),
        unknown_slot_names(turns, slot_file),
        slot_file,
        profile,
    )


__all__ = [
    "UNKNOWN_SLOT",
    "ChatTurn",
    "RoutingVerdict",
    "idle_sentence",
    "routing_verdict",
    "session_shares",
    "slot_for",
    "unknown_slot_names",
    "verdict_from_counts",
    "watched_slots",
]
