"""``dataset_judgements``: the judge slot compares each prompt's answers, twice, in both orders.

For each prompt of a dataset version with at least two usable answers that differ (not
empty, not cut by ``max_tokens``; from different roles, or different samples of one role),
every two answers are one comparison. A comparison is asked twice, the answers swapped,
because judges prefer whichever answer they read first; ``preferences.py`` counts a pair
only when both orders name the same winner.

The judge is the profile's judge slot (``SlotFile.for_judging``: the slot the profile names,
else grandpa's), asked through the one LLM run as the ``judge`` role, which no other slot
serves. Its answer is constrained to :data:`VERDICT_SCHEMA` in its runtime's own request
shape (llama.cpp ``response_format``, vLLM structured outputs), so even a poor model returns
parseable JSON. An answer that still does not parse is a row with its cause, never a pair. A
comparison with an answer the judge slot wrote itself is skipped and counted. Judgements go
through the completions store, so a rerun asks nothing twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.errors import UserError
from model_foundry.lib.gates.script import languages
from model_foundry.lib.gates.verdict import (
    SCORE_MAX,
    SCORE_MIN,
    VERDICT_MAX_TOKENS,
    VERDICT_SCHEMA,
    VerdictError,
    parse_verdict,
)
from model_foundry.lib.llm import Answer, Body, Request, SlotSource, WorkKind
from model_foundry.lib.slots.config import JUDGE_ROLE, NoSlotForRoleError, Slot, SlotFile
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions
from model_foundry.lib.tables.judgements import DATASET_JUDGEMENTS, JudgementRow


def verdict_params(judge: Slot) -> dict[str, Any]:
    """The judge's ``max_tokens`` raised to :data:`VERDICT_MAX_TOKENS` where its slot sets a
    lower one. A slot without one is left to its server's own limit (which the schema, not a
    count, ends). Comparisons already judged are found by their answers, not by request key
    (``plan_comparisons``), so none is asked again when this changes a key."""
    limit = judge.request_defaults.max_tokens
    return {"max_tokens": VERDICT_MAX_TOKENS} if limit and limit < VERDICT_MAX_TOKENS else {}


JUDGE_SYSTEM = (
    "You judge answers to a user's request. Read the conversation, then Answer 1 and "
    f"Answer 2. Score each answer from {SCORE_MIN} (wrong or useless) to {SCORE_MAX} "
    "(correct, complete and clear), judging only how well it serves the request. The order "
    "of the answers says nothing about their quality, and neither does their length. Reply "
    'with JSON only: {"score_1": <score of Answer 1>, "score_2": <score of Answer 2>, '
    '"reason": "<one short sentence>"}.'
)

_USABLE = """
SELECT request_key, prompt_id, messages::VARCHAR AS messages, response, slot, model
FROM dataset_samples
WHERE dataset = ? AND version = ? AND NOT is_empty AND NOT is_truncated
    AND regexp_matches(coalesce(response, ''), '[^[:space:]]')
ORDER BY prompt_id, request_key
"""
_ASKED = """
SELECT DISTINCT answer_a, answer_b, first FROM dataset_judgements
WHERE dataset = ? AND version = ? AND judge_slot = ?
"""


def judge_task(name: str) -> str:
    return f"judge:{name}"


@dataclass(frozen=True)
class Sampled:
    """One usable answer: its sample's request key, text and who wrote it."""

    key: str
    response: str
    slot: str | None
    model: str | None


@dataclass(frozen=True)
class Comparison:
    """One ask: answers ``a`` and ``b`` (keys sorted) to a prompt, ``first`` read first."""

    prompt_id: str
    language: str
    messages: list[dict[str, Any]]
    a: Sampled
    b: Sampled
    first: str  # "a" or "b"

    @property
    def ordered(self) -> tuple[Sampled, Sampled]:
        return (self.a, self.b) if self.first == "a" else (self.b, self.a)


@dataclass
class Plan:
    """What a version has to judge, and what was left out and why."""

    comparisons: list[Comparison] = field(default_factory=list)
    prompts: int = 0
    prompts_judged: int = 0
    pairs: int = 0
    self_skipped: int = 0
    already_asked: int = 0

    def metadata(self) -> dict[str, int]:
        return {
            "prompts_with_answers": self.prompts,
            "prompts_judged": self.prompts_judged,
            "answer_pairs": self.pairs,
            "self_judgements_skipped": self.self_skipped,
            "judge_requests_pending": len(self.comparisons),
            "judge_requests_already_asked": self.already_asked,
        }


def prompt_language(messages: Sequence[Mapping[str, Any]]) -> str:
    """``ja`` when the prompt's text shows Japanese script, else ``en``."""
    found = languages([str(m.get("content") or "") for m in messages])
    return "ja" if "ja" in found else "en"


def _distinct(answers: list[Sampled]) -> list[Sampled]:
    """Answers whose text differs: the same text twice is nothing to compare."""
    seen: set[str] = set()
    out = []
    for s in answers:
        text = s.response.strip()
        if text not in seen:
            seen.add(text)
            out.append(s)
    return out


def plan_comparisons(
    db_path: str | Path, name: str, version: str, judge_slot: str, *, grouped: bool = True
) -> Plan:
    """Every comparison of ``name``/``version`` the judge slot has not been asked yet; with
    ``grouped`` (off: pair after pair, both orders, as before families existed) in the order
    :func:`by_answer_read_first` gives."""
    with storage.connect(db_path) as con:
        rows = con.execute(_USABLE, [name, version]).fetchall()
        asked = {tuple(r) for r in con.execute(_ASKED, [name, version, judge_slot]).fetchall()}
    by_prompt: dict[str, tuple[str, list[Sampled]]] = {}
    for key, prompt_id, messages, response, slot, model in rows:
        entry = by_prompt.setdefault(prompt_id, (messages, []))
        entry[1].append(Sampled(key, response, slot, model))
    plan = Plan(prompts=len(by_prompt))
    for prompt_id, (messages_json, answers) in by_prompt.items():
        messages = json.loads(messages_json)
        language = prompt_language(messages)
        judged = False
        distinct = _distinct(answers)
        pending = []
        for a, b in combinations(distinct, 2):
            plan.pairs += 1
            if judge_slot in (a.slot, b.slot):
                plan.self_skipped += 1
                continue
            judged = True
            for first in ("a", "b"):
                if (a.key, b.key, first) in asked:
                    plan.already_asked += 1
                    continue
                pending.append(Comparison(prompt_id, language, messages, a, b, first))
        plan.comparisons += by_answer_read_first(pending, distinct) if grouped else pending
        plan.prompts_judged += judged
    return plan


def by_answer_read_first(comparisons: list[Comparison], answers: list[Sampled]) -> list[Comparison]:
    """One prompt's comparisons, those that read the same answer first side by side (A-B,
    A-C, B-A, B-C, ...): asked one after another in one server slot, each reuses the cached
    prompt up to the end of that first answer, not only up to the conversation. Which
    comparisons there are, and their keys, do not change; only the order they are asked in."""
    place = {s.key: n for n, s in enumerate(answers)}
    return sorted(comparisons, key=lambda c: place[c.ordered[0].key])


def judge_messages(comparison: Comparison) -> list[dict[str, str]]:
    """The judge's conversation: the instructions, then the prompt and both answers."""
    shown = "\n\n".join(f"[{m['role']}]\n{m.get('content') or ''}" for m in comparison.messages)
    one, two = comparison.ordered
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {
            "role": "user",
            "content": (
                f"Conversation:\n{shown}\n\nAnswer 1:\n{one.response.strip()}\n\n"
                f"Answer 2:\n{two.response.strip()}"
            ),
        },
    ]


def _winner(score_a: int, score_b: int) -> str:
    return "a" if score_a > score_b else "b" if score_b > score_a else "tie"


def comparison_id(a_key: str, b_key: str) -> str:
    return hashlib.sha256(f"{a_key}\x00{b_key}".encode()).hexdigest()[:16]


class Judgements(WorkKind[Comparison, JudgementRow]):
    """The judge's answers about one dataset version, one row per ask."""

    event = "model_foundry.dataset_judgement"

    def __init__(self, name: str, version: str, params: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.version = version
        self.params = {"temperature": 0, "seed": 0, **(params or {})}
        self.label = f"judgements {name}/{version}"

    def request(self, item: Comparison) -> Request:
        return Request(
            judge_task(self.name),
            JUDGE_ROLE,
            Body(messages=judge_messages(item)),
            # The schema is a parameter: part of the request key, spelled per runtime.
            params={**self.params, "json_schema": dict(VERDICT_SCHEMA)},
            # Every comparison of one prompt, in either order, shares the instructions and the
            # conversation before its answers (``judge_messages``).
            family=f"judge:{item.prompt_id}",
        )

    def row(self, item: Comparison, answer: Answer, run_id: str | None) -> JudgementRow:
        c = answer.completion
        score_a = score_b = None
        winner = reason = cause = None
        try:
            first, second, reason = parse_verdict(c.content)
            score_a, score_b = (first, second) if item.first == "a" else (second, first)
            winner = _winner(score_a, score_b)
        except VerdictError as exc:
            cause = str(exc)
        return JudgementRow(
            dataset=self.name,
            version=self.version,
            prompt_id=item.prompt_id,
            language=item.language,
            answer_a=item.a.key,
            answer_b=item.b.key,
            first=item.first,
            model_a=item.a.model,
            model_b=item.b.model,
            slot_a=item.a.slot,
            slot_b=item.b.slot,
            request_key=answer.request.key,
            judge_slot=c.slot,
            judge_model=c.model,
            status="unparsed" if cause else "ok",
            score_a=score_a,
            score_b=score_b,
            winner=winner,
            reason=reason,
            cause=cause,
            run_id=run_id,
        )

    def write(self, db_path: Path, rows: Sequence[JudgementRow]) -> int:
        return write_judgements(db_path, self.name, self.version, rows)

    def event_fields(self, item: Comparison, answer: Answer) -> Mapping[str, Any]:
        return {"dataset": self.name, "version": self.version, "model": answer.completion.model}


def write_judgements(
    db_path: str | Path, name: str, version: str, rows: Sequence[JudgementRow]
) -> int:
    """Insert the rows whose request key the version does not hold yet; how many were new."""
    if not rows:
        return 0
    table = DATASET_JUDGEMENTS

    def work(con: Any) -> int:
        held = {
            k
            for (k,) in con.execute(
                "SELECT request_key FROM dataset_judgements WHERE dataset = ? AND version = ? "
                "AND request_key IN (SELECT unnest(?::VARCHAR[]))",
                [name, version, [r.request_key for r in rows]],
            ).fetchall()
        }
        new = list({r.request_key: r for r in rows if r.request_key not in held}.values())
        return table.insert(con, new)

    return storage.run_in_transaction(db_path, work)


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
    """A run's slots with the judge slot live and serving the ``judge`` role alone."""

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


def unparsed_causes(rows: Sequence[JudgementRow]) -> dict[str, int]:
    """How many of ``rows`` did not parse, by cause: its sentence without the answer shown
    after the colon, so one kind of failure is one entry."""
    counts: dict[str, int] = {}
    for r in rows:
        if r.cause:
            head = r.cause.split(": ")[0]
            counts[head] = counts.get(head, 0) + 1
    return counts


__all__ = [
    "Comparison",
    "JudgeRefusedError",
    "JudgeSlots",
    "Judgements",
    "Plan",
    "by_answer_read_first",
    "comparison_id",
    "judge_messages",
    "judge_task",
    "plan_comparisons",
    "prompt_language",
    "require_judge_slot",
    "unparsed_causes",
    "write_judgements",
]
