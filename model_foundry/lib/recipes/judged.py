"""Judging a collected version through its judge recipe (``collect_judge.py``), and
``dataset_judgements`` filled from the cells: one row per order, as it always was, so users'
queries and ``model_preferences`` read what they read before; which comparisons are
preference pairs is the cell's ``winner`` (``tables/judgements.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.llm import LlmRun
from model_foundry.lib.recipes.collect_judge import (
    QUALITY,
    VERDICT,
    Plan,
    judge_recipe,
    plan_comparisons,
)
from model_foundry.lib.recipes.columns.judge import PAIR_ORDERS, JudgeColumn
from model_foundry.lib.recipes.generate import Generation
from model_foundry.lib.recipes.llm_cells import cell_requests
from model_foundry.lib.recipes.migration import cells_from_verdicts
from model_foundry.lib.recipes.outcome import RecipeOutcome
from model_foundry.lib.recipes.spec import Recipe
from model_foundry.lib.tables.judgements import DATASET_JUDGEMENTS, JudgementRow
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS


@dataclass
class Judged:
    """What judging a version did: its plan, the recipe's outcome, the version's
    ``dataset_judgements`` rows, how many of them were new, and the verdicts migrated."""

    plan: Plan
    outcome: RecipeOutcome
    rows: list[JudgementRow]
    written: int
    migrated: int | None


def judge(run: LlmRun, name: str, version: str, judge_slot: str) -> Judged:
    """Judge ``name``/``version`` through its judge recipe (``run`` serves the judge role on
    the judge slot alone) and fill ``dataset_judgements`` from the cells."""
    recipe = judge_recipe(name)
    # Before the stored cells are read: verdicts from before the recipe become its cells.
    migrated = storage.run_in_transaction(
        run.db_path, lambda con: cells_from_verdicts(con, run, judge_slot)
    )
    plan = plan_comparisons(run.db_path, name, version, judge_slot)
    rows = [c.row for c in plan.comparisons]
    outcome = Generation(recipe, run, rows, version, run.run_id).generate()
    judged = judgement_rows(run, recipe, name, version, plan)
    return Judged(plan, outcome, judged, write_judgements(run.db_path, judged), migrated)


_CELLS = f"""
SELECT row_id, value, status, cause, slot, model FROM {DATASET_RECIPE_CELLS.name}
WHERE recipe = ? AND version = ? AND column_name = ?
QUALIFY row_number() OVER (PARTITION BY row_id ORDER BY created_at DESC) = 1
"""


def _scores(verdict: Any) -> tuple[int, int, str] | None:
    """One order's (score read first, score read second, reason), or None: not a verdict."""
    if not isinstance(verdict, Mapping):
        return None
    one, two = verdict.get(f"{QUALITY.name}_1"), verdict.get(f"{QUALITY.name}_2")
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in (one, two)):
        return None
    return int(one), int(two), str(verdict.get("reason") or "")  # type: ignore[arg-type]


def judgement_rows(
    run: LlmRun, recipe: Recipe, name: str, version: str, plan: Plan
) -> list[JudgementRow]:
    """Two ``dataset_judgements`` rows per judged comparison, one per order (``first``: the
    answer read first), each with its own request's key."""
    column = recipe.column(VERDICT)
    assert isinstance(column, JudgeColumn)
    with storage.connect(run.db_path, read_only=True) as con:
        found = con.execute(_CELLS, [recipe.name, version, VERDICT]).fetchall()
    cells = {r[0]: r[1:] for r in found}
    out: list[JudgementRow] = []
    for c in plan.comparisons:
        if c.row.row_id not in cells:
            continue
        value_json, status, cause, slot, model = cells[c.row.row_id]
        value = json.loads(value_json) if value_json is not None else None
        requests = cell_requests(recipe, column, c.row.row_id, 0, dict(c.row.values))
        keys = [run.plan(r).key for r in requests]
        for order, first, key in zip(PAIR_ORDERS, ("a", "b"), keys, strict=True):
            held = value.get(order) if isinstance(value, dict) else None
            verdict = value.get(f"verdict_{order}") if status == "ok" else held
            scores = _scores(verdict)
            one = two = reason = winner = None
            if scores is not None:
                one, two, reason = scores if first == "a" else (scores[1], scores[0], scores[2])
                winner = "a" if one > two else "b" if two > one else "tie"
            out.append(JudgementRow(
                dataset=name,
                version=version, prompt_id=c.prompt_id, language=c.language,
                answer_a=c.a.key, answer_b=c.b.key, first=first,
                model_a=c.a.model, model_b=c.b.model, slot_a=c.a.slot, slot_b=c.b.slot,
                request_key=key, judge_slot=slot or "", judge_model=model or "",
                status="ok" if scores is not None else "unparsed",
                score_a=one, score_b=two, winner=winner, reason=reason,
                cause=None if scores is not None else (cause or "unparsed"),
                run_id=run.run_id,
            ))  # fmt: skip
    return out


_HELD = f"""
SELECT DISTINCT answer_a, answer_b, first, judge_slot FROM {DATASET_JUDGEMENTS.name}
WHERE dataset = ? AND version = ? AND answer_a IN (SELECT unnest(?::VARCHAR[]))
"""


def write_judgements(db_path: str | Path, rows: Sequence[JudgementRow]) -> int:
    """Insert the rows whose ask (the two answers, the one read first and the judge slot)
    their version does not hold yet; how many were new. By ask, not request key: a verdict
    stored before the judge was a recipe has another key for the same ask."""
    if not rows:
        return 0

    def work(con: duckdb.DuckDBPyConnection) -> int:
        new: list[JudgementRow] = []
        groups: dict[tuple[str, str], list[JudgementRow]] = {}
        for r in rows:
            groups.setdefault((r.dataset, r.version), []).append(r)
        for (name, version), group in groups.items():
            firsts = list({r.answer_a for r in group})
            held = set(con.execute(_HELD, [name, version, firsts]).fetchall())
            for r in group:
                ask = (r.answer_a, r.answer_b, r.first, r.judge_slot)
                if ask not in held:
                    held.add(ask)
                    new.append(r)
        return DATASET_JUDGEMENTS.insert(con, new)

    return storage.run_in_transaction(db_path, work)


def unparsed_causes(rows: Sequence[JudgementRow]) -> dict[str, int]:
    """How many of ``rows`` did not parse, by cause (its sentence up to a colon)."""
    counts: dict[str, int] = {}
    for r in rows:
        if r.cause:
            head = r.cause.split(": ")[0]
            counts[head] = counts.get(head, 0) + 1
    return counts


# Each stored comparison of the judge slot: both of its asks, with the answers they read.

__all__ = ["Judged", "judge", "judgement_rows", "unparsed_causes", "write_judgements"]
