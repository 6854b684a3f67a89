"""``dataset collect`` as a built-in recipe: ``collect_<dataset>``.

Its rows are the collection's distinct prompts (prompt files and inbox sessions, read and
deduplicated by ``lib/datasets/prompts.py``), its seed columns each prompt's ``messages``,
``prompt_id`` and ``source``, and it has one ``llm_text`` column per chat role asked,
``answer_<role>``, with ``samples`` samples: the prompt's turns as they are (``messages``),
sample ``i`` sent with ``seed: i`` (``seed_per_sample``), under the task ``dataset:<name>``.
That is the request ``dataset collect`` sent before it was a recipe, key for key, so the
completions store and the cells migrated from ``dataset_samples`` (``migration.py``) answer
what was paid for then.

The recipe generator asks and stores the cells (``generate.py``); ``dataset_samples`` is then
filled from them, one row per answered cell with its answer's details from the completions
store, so users' queries and the chat, Parquet and preference exports read what they always
read. Gates stay off here: the collection's export applies them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.datasets.prompts import PromptRecord
from model_foundry.lib.datasets.samples import dataset_task, sample_row, write_samples
from model_foundry.lib.llm import Answer, LlmRun
from model_foundry.lib.llm.request import Planned
from model_foundry.lib.llm.store import Completion
from model_foundry.lib.recipes.columns.llm import TextColumn
from model_foundry.lib.recipes.columns.seed import SeedColumn
from model_foundry.lib.recipes.generate import Generation, llm_request
from model_foundry.lib.recipes.migration import migrate_samples
from model_foundry.lib.recipes.outcome import RecipeOutcome
from model_foundry.lib.recipes.seeds import SeedRow
from model_foundry.lib.recipes.spec import Recipe
from model_foundry.lib.tables.datasets import DatasetSampleRow
from model_foundry.lib.tables.recipes import DATASET_RECIPE_CELLS, ident

# The seed column holding a prompt's chat turns (the text columns read it).
MESSAGES = "messages"


def recipe_name(dataset: str) -> str:
    return f"collect_{ident(dataset)}"


def column_name(role: str) -> str:
    return f"answer_{ident(role)}"


def prompt_row_id(messages: Sequence[Mapping[str, str]]) -> str:
    """A prompt's row: a hash of its turns as ``dataset_samples.messages`` stores them."""
    stored = json.dumps(list(messages), ensure_ascii=False)
    return hashlib.sha256(stored.encode("utf-8")).hexdigest()[:20]


def collect_recipe(
    dataset: str, roles: Sequence[str], samples: int, params: Mapping[str, Any]
) -> Recipe:
    """The built-in recipe of ``dataset``; a ``ValueError`` in one sentence when two roles
    would share a column."""
    columns: dict[str, str] = {}
    for role in roles:
        name = column_name(role)
        if name in columns:
            raise ValueError(
                f"roles {columns[name]!r} and {role!r} would both be column {name} of recipe "
                f"{recipe_name(dataset)}: ask one of them"
            )
        columns[name] = role
    seeds = [SeedColumn(name=n, seed_field=n) for n in (MESSAGES, "prompt_id", "source")]
    asked = [
        TextColumn(
            name=name,
            role=role,
            messages=MESSAGES,
            params=dict(params),
            samples=samples,
            seed_per_sample=True,
        )
        for name, role in columns.items()
    ]
    return Recipe(
        name=recipe_name(dataset),
        source=f"the built-in recipe of dataset {dataset} (dataset collect)",
        columns=(*seeds, *asked),
        gates_on=False,
        task=dataset_task(dataset),
        description=f"dataset collect {dataset}: every prompt x every chat role x samples",
    )


def prompt_rows(prompts: Sequence[PromptRecord]) -> list[SeedRow]:
    return [
        SeedRow(
            row_id=prompt_row_id(p.messages),
            index=i,
            values={MESSAGES: p.messages, "prompt_id": p.prompt_id, "source": p.source},
        )
        for i, p in enumerate(prompts)
    ]


@dataclass
class Collected:
    """What a collection did: the recipe's outcome, the samples answered (rows of
    ``dataset_samples``, this run's and earlier ones') and how many of them were new."""

    outcome: RecipeOutcome
    rows: list[DatasetSampleRow] = field(default_factory=list)
    written: int = 0
    migrated: int | None = None


def collect(
    run: LlmRun,
    dataset: str,
    version: str,
    prompts: Sequence[PromptRecord],
    roles: Sequence[str],
    samples: int,
    params: Mapping[str, Any],
) -> Collected:
    """Ask ``prompts`` x ``roles`` x ``samples`` through the recipe generator under
    ``version`` and fill ``dataset_samples`` from the cells."""
    # Before the stored cells are read: samples from before the recipe become its cells.
    migrated = migrate_samples(run.db_path)
    recipe = collect_recipe(dataset, roles, samples, params)
    rows = prompt_rows(prompts)
    outcome = Generation(recipe, run, rows, version, run.run_id).generate()
    answered = sample_rows(run, recipe, dataset, version, prompts, rows)
    written = write_samples(run.db_path, answered)
    return Collected(outcome, answered, written, migrated)


def sample_rows(
    run: LlmRun,
    recipe: Recipe,
    dataset: str,
    version: str,
    prompts: Sequence[PromptRecord],
    rows: Sequence[SeedRow],
) -> list[DatasetSampleRow]:
    """One ``dataset_samples`` row per answered cell, in the order the prompts came: its
    answer's details from the completions store, or from the cell alone where the store no
    longer holds the answer (its reasoning and finish reason then unknown)."""
    asked: list[tuple[PromptRecord, SeedRow, TextColumn, int, Planned]] = []
    for prompt, row in zip(prompts, rows, strict=True):
        for column in recipe.columns:
            if not isinstance(column, TextColumn):
                continue
            for i in range(column.samples):
                request = llm_request(recipe, column, row.row_id, i, dict(row.values))
                asked.append((prompt, row, column, i, run.plan(request)))
    found = run.store.finished(p.key for *_, p in asked)
    cells = _answered_cells(run, recipe, version) if len(found) < len(asked) else {}
    out = []
    for prompt, row, column, i, p in asked:
        completion = found.get(p.key) or cells.get((row.row_id, column.name, i))
        if completion is not None:
            answer = Answer(p, completion)
            out.append(sample_row(dataset, version, prompt, column.role, i, answer, run.run_id))
    return out


_CELLS_SQL = f"""
SELECT row_id, column_name, sample_index, value, slot, model, prompt_tokens, completion_tokens
FROM {DATASET_RECIPE_CELLS.name}
WHERE recipe = ? AND version = ? AND status = 'ok' AND column_type = 'llm_text'
"""


def _answered_cells(run: LlmRun, recipe: Recipe, version: str) -> dict[Any, Completion]:
    """The version's answered cells as answers, by (row, column, sample)."""
    with storage.connect(run.db_path, read_only=True) as con:
        found = con.execute(_CELLS_SQL, [recipe.name, version]).fetchall()
    return {
        (row, column, i): Completion(
            request_key="",
            content=json.loads(value) or "",
            reasoning=None,
            slot=slot or "",
            model=model or "",
            prompt_tokens=pt,
            completion_tokens=ct,
            latency_s=None,
            gen_tps=None,
            finish_reason=None,
            reused=True,
        )
        for row, column, i, value, slot, model, pt, ct in found
    }


__all__ = [
    "MESSAGES",
    "Collected",
    "collect",
    "collect_recipe",
    "column_name",
    "prompt_row_id",
    "prompt_rows",
    "recipe_name",
    "sample_rows",
]
