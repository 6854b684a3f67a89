"""``dataset collect --judge`` as a built-in recipe: ``judge_<dataset>``.

Its rows are a collected version's comparisons: for each prompt with two or more usable
answers that differ (not empty, not cut by ``max_tokens``), every two of them, keys in sorted
order (``answer_a`` < ``answer_b``), unless the judge slot wrote one of them (skipped and
counted). A row's seed columns are the prompt as the judge reads it (``conversation``) and
the two answers; its one column, ``verdict``, is an ``llm_judge`` column comparing them in
both orders (``columns/judge.py``), so the winner and the tie rule are the pairwise judge's:
an answer wins only when both orders prefer it. ``judged.py`` runs it and fills
``dataset_judgements`` from its cells; ``migration.py`` makes the verdicts stored before it
its cells.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.gates.script import languages
from model_foundry.lib.gates.verdict import SCORE_MAX, SCORE_MIN
from model_foundry.lib.recipes.columns.judge import JUDGE_ROLE, JudgeColumn, Score
from model_foundry.lib.recipes.columns.seed import SeedColumn
from model_foundry.lib.recipes.seeds import SeedRow
from model_foundry.lib.recipes.spec import Recipe
from model_foundry.lib.tables.judgements import comparison_id
from model_foundry.lib.tables.recipes import ident

VERDICT = "verdict"
CONVERSATION = "conversation"
QUALITY = Score(
    "quality", "how well the answer serves the request: correct, complete and clear",
    SCORE_MIN, SCORE_MAX,
)  # fmt: skip


def judge_task(name: str) -> str:
    return f"judge:{name}"


def judge_recipe_name(dataset: str) -> str:
    """``judge_<dataset>``; ``tables/judgements.py`` spells the same in SQL."""
    return f"judge_{ident(dataset)}"


def judge_recipe(dataset: str) -> Recipe:
    seeds = [SeedColumn(name=n, seed_field=n) for n in (CONVERSATION, "answer_a", "answer_b")]
    verdict = JudgeColumn(
        name=VERDICT,
        role=JUDGE_ROLE,
        prompt="Conversation:\n{{ conversation }}",
        params={"temperature": 0},
        scores=(QUALITY,),
        compare=("answer_a", "answer_b"),
    )
    return Recipe(
        name=judge_recipe_name(dataset),
        source=f"the built-in judge of dataset {dataset} (dataset collect --judge)",
        columns=(*seeds, verdict),
        task=judge_task(dataset),
        description=f"dataset collect {dataset} --judge: every two answers to a prompt",
    )


def prompt_language(messages: Sequence[Mapping[str, Any]]) -> str:
    """``ja`` when the prompt's text shows Japanese script, else ``en``."""
    found = languages([str(m.get("content") or "") for m in messages])
    return "ja" if "ja" in found else "en"


def conversation(messages: Sequence[Mapping[str, Any]]) -> str:
    """The prompt's turns as the judge reads them."""
    return "\n\n".join(f"[{m['role']}]\n{m.get('content') or ''}" for m in messages)


@dataclass(frozen=True)
class Answered:
    """One usable answer: its sample's request key, text and who wrote it."""

    key: str
    response: str
    slot: str | None
    model: str | None


@dataclass(frozen=True)
class Comparison:
    """Answers ``a`` and ``b`` (keys sorted) to a prompt: one row of the judge recipe."""

    prompt_id: str
    language: str
    a: Answered
    b: Answered
    row: SeedRow


@dataclass
class Plan:
    """What a version has to judge, and what was left out and why."""

    comparisons: list[Comparison] = field(default_factory=list)
    prompts: int = 0
    prompts_judged: int = 0
    self_skipped: int = 0
    pairs: int = 0

    def metadata(self) -> dict[str, int]:
        return {
            "prompts_with_answers": self.prompts,
            "prompts_judged": self.prompts_judged,
            "answer_pairs": self.pairs,
            "self_judgements_skipped": self.self_skipped,
        }


_USABLE = """
SELECT request_key, prompt_id, messages::VARCHAR AS messages, response, slot, model
FROM dataset_samples
WHERE dataset = ? AND version = ? AND NOT is_empty AND NOT is_truncated
    AND regexp_matches(coalesce(response, ''), '[^[:space:]]')
ORDER BY prompt_id, request_key
"""


def _distinct(answers: list[Answered]) -> list[Answered]:
    """Answers whose text differs: the same text twice is nothing to compare."""
    seen: set[str] = set()
    out = []
    for s in answers:
        if (text := s.response.strip()) not in seen:
            seen.add(text)
            out.append(s)
    return out


def plan_comparisons(db_path: str | Path, name: str, version: str, judge_slot: str) -> Plan:
    """Every comparison of ``name``/``version`` that the judge slot may judge."""
    with storage.connect(db_path) as con:
        found = con.execute(_USABLE, [name, version]).fetchall()
    by_prompt: dict[str, tuple[str, list[Answered]]] = {}
    for key, prompt_id, messages, response, slot, model in found:
        by_prompt.setdefault(prompt_id, (messages, []))[1].append(
            Answered(key, response, slot, model)
        )
    plan = Plan(prompts=len(by_prompt))
    for prompt_id, (messages_json, answers) in by_prompt.items():
        messages = json.loads(messages_json)
        judged = False
        for a, b in combinations(_distinct(answers), 2):
            plan.pairs += 1
            if judge_slot in (a.slot, b.slot):
                plan.self_skipped += 1
                continue
            judged = True
            values = {CONVERSATION: conversation(messages),
                      "answer_a": a.response, "answer_b": b.response}  # fmt: skip
            row = SeedRow(comparison_id(a.key, b.key), len(plan.comparisons), values)
            plan.comparisons.append(Comparison(prompt_id, prompt_language(messages), a, b, row))
        plan.prompts_judged += judged
    return plan


__all__ = [
    "CONVERSATION",
    "QUALITY",
    "VERDICT",
    "Answered",
    "Comparison",
    "Plan",
    "conversation",
    "judge_recipe",
    "judge_recipe_name",
    "judge_task",
    "plan_comparisons",
    "prompt_language",
]
