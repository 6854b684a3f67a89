"""The slot roles a recipe asks: each LLM column's role is in the slot file (read at run
time) and has a live slot in the profile; a recipe asking the judge role gets the judge slot
to itself (``JudgeSlots``), and ``--judge`` without a judge slot is refused first."""

from __future__ import annotations

from model_foundry.lib.errors import UserError
from model_foundry.lib.llm.run import SlotSource
from model_foundry.lib.recipes.columns.judge import JUDGE_ROLE
from model_foundry.lib.recipes.spec import Recipe, RecipeError
from model_foundry.lib.slots.config import NoSlotForRoleError, Slot, SlotFile
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions


class JudgeRefusedError(UserError):
    """Judging was asked for and the profile has no judge slot."""


def require_judge_slot(slot_file: SlotFile, profile: str | None) -> Slot:
    """The profile's judge slot; :class:`JudgeRefusedError` in one sentence when it has none,
    so ``--judge`` is refused before any slot is asked."""
    try:
        slot_file.for_judging(profile)
    except NoSlotForRoleError as exc:
        raise JudgeRefusedError(f"--judge refused: {exc}") from None
    judge = slot_file.judge_slot(profile)
    assert judge is not None  # for_judging refuses a profile without one
    return judge


class JudgeSlots:
    """A run's slots with the judge slot live and serving the ``judge`` role alone, so no
    other slot ever judges (``SlotFile.for_judging``)."""

    def __init__(self, source: SlotSource) -> None:
        self.source = source
        self._profile: str | None = None

    @property
    def profile(self) -> str | None:
        return self._profile

    def load(self) -> SlotFile:
        judging, self._profile = self.source.load().for_judging(self.source.profile)
        return judging

    def context_book(self, slot_file: SlotFile) -> ContextBook:
        return ContextBook(slot_file.live_slots(self._profile))

    def dispatch_options(self) -> DispatchOptions:
        return self.source.dispatch_options()


def role_problems(recipe: Recipe, slot_file: SlotFile, profile: str | None) -> list[RecipeError]:
    """A sentence per LLM column whose role the slot file lacks or has no live slot for in
    ``profile``, naming the recipe's file and the column's role."""
    known = slot_file.known_roles()
    out: list[RecipeError] = []
    for name, role in recipe.roles().items():
        where = f"columns.{name}.role"
        try:
            if role == JUDGE_ROLE:
                slot_file.for_judging(profile)
            elif role not in known:
                has = ", ".join(sorted(known))
                problem = f"the slot file {slot_file.source} has no role {role!r} (it has: {has})"
                out.append(recipe.error(where, problem))
            else:
                slot_file.slots_for_role(role, profile)
        except NoSlotForRoleError as exc:
            out.append(recipe.error(where, str(exc)))
    return out


def check_roles(recipe: Recipe, slot_file: SlotFile, profile: str | None) -> None:
    """The first of :func:`role_problems`, raised."""
    problems = role_problems(recipe, slot_file, profile)
    if problems:
        raise problems[0]


def judging(recipe: Recipe, slots: SlotSource) -> SlotSource:
    """The slots, roles checked; with a column asking the judge role, with the judge slot
    live and serving it alone."""
    check_roles(recipe, slots.load(), slots.profile)
    if JUDGE_ROLE not in recipe.roles().values():
        return slots
    return JudgeSlots(slots)


__all__ = [
    "JudgeRefusedError",
    "JudgeSlots",
    "check_roles",
    "judging",
    "require_judge_slot",
    "role_problems",
]
