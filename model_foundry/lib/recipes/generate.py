"""Generating a recipe's rows row by row, every LLM call through
:class:`~model_foundry.lib.llm.LlmRun`.

A row's column begins as soon as the columns it reads are done in that row: seed, sampler,
expression and validation cells are computed there and then, LLM cells are asked in the
run's one growing round (``LlmRun.ask_stream``: plan, fit, dispatch under the slots' caps,
store). No column waits for other rows, so while one row waits for its judge another row's
first answer is already in flight. A pairwise judge's cell waits for both its orders. New
cells are written in batches (``cells.CellWriter``) and at the end.

Exactly once: a cell's key hashes the recipe, the row, the column, the sample and what the
cell read (for an LLM cell, its request key, which covers the rendered prompt and the
parameters). Cells stored when the run starts (in any version, a preview's too) are taken
as they are and not asked again; an answer paid for before a run was killed is in the
completions store, so the next run takes it from there. A changed template changes the keys
of its column and of the columns that read it, and only those are asked.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

from model_foundry.lib.llm import LlmRun
from model_foundry.lib.llm.request import Planned, canonical
from model_foundry.lib.llm.run import Log, SlotSource
from model_foundry.lib.recipes.cells import CellWriter, StoredCellValue, make_view, recipe_cells
from model_foundry.lib.recipes.columns.base import Column
from model_foundry.lib.recipes.columns.llm import LlmColumn
from model_foundry.lib.recipes.graph import levels
from model_foundry.lib.recipes.llm_cells import answer_value, cell_requests, requests_key, tokens
from model_foundry.lib.recipes.outcome import RecipeOutcome
from model_foundry.lib.recipes.roles import judging
from model_foundry.lib.recipes.seeds import SeedRow, advance_mark, seed_rows
from model_foundry.lib.recipes.spec import Recipe

RUN_VERSION = "run"
PREVIEW_VERSION = "preview"

# Rows are begun ROWS_PER_STEP at a time while fewer than ROWS_AHEAD requests wait for an
# answer: the first requests go out once that many are planned, not after every row, and the
# rest are planned as answers come. ROWS_AHEAD is above the places the slots of a large lab
# serve at once (256 in flight over 8 slots), so no place waits for a row to be begun.
ROWS_AHEAD = 512
ROWS_PER_STEP = 16


def cell_key(*parts: Any) -> str:
    return hashlib.sha256(canonical(list(parts)).encode("utf-8")).hexdigest()


class PendingCell(NamedTuple):
    """An LLM cell waiting for its requests (one, or a pairwise judge's two orders)."""

    row: SeedRow
    column: LlmColumn
    sample: int
    planned: list[Planned]
    key: str


class RowFeed:
    """The seed rows, handed out ``ROWS_PER_STEP`` at a time."""

    def __init__(self, rows: Sequence[SeedRow]) -> None:
        self.rows = rows
        self.begun = 0

    def step(self) -> Sequence[SeedRow]:
        step = self.rows[self.begun : self.begun + ROWS_PER_STEP]
        self.begun += len(step)
        return step

    def left(self) -> Sequence[SeedRow]:
        return self.rows[self.begun :]


class Generation:
    """One recipe over its rows in one ``LlmRun`` (see the module doc)."""

    def __init__(self, recipe: Recipe, run: LlmRun, rows: Sequence[SeedRow], version: str,
                 run_id: str | None) -> None:  # fmt: skip
        self.recipe = recipe
        self.run = run
        self.db_path = run.db_path
        self.rows = rows
        self.version = version
        self.run_id = run_id
        self.label = f"recipe {recipe.name}"
        self.outcome = RecipeOutcome(recipe.name, version, rows=len(rows))
        self.outcome.values = {r.row_id: {} for r in rows}
        # The columns in an order where each comes after those it reads.
        self.order = [c for wave in levels(recipe) for c in wave]
        # Per row: the columns begun, and each LLM column's samples not settled yet.
        self.begun: dict[str, set[str]] = {r.row_id: set() for r in rows}
        self.open: dict[str, Counter[str]] = {r.row_id: Counter() for r in rows}
        self.waiting: dict[str, list[PendingCell]] = {}
        self.answers: dict[str, Any] = {}
        self.stored: dict[str, StoredCellValue] = {}
        self.writer = CellWriter(recipe.name, version, run_id, self.db_path)
        self.error: Exception | None = None
        self.feed_rows = RowFeed(rows)

    def generate(self) -> RecipeOutcome:
        self.stored = recipe_cells(self.db_path, self.recipe.name)
        first = self.feed()
        if first:
            roles = set(self.recipe.roles().values())
            self.run.ask_stream(first, self.settled, self.label, roles)
        # Cells whose requests were never settled (the batch stopped early) have no answer;
        # a pairwise cell waits under both its requests, and counts once.
        left = {cell[4]: cell for cells in self.waiting.values() for cell in cells}
        for row, column, *_ in left.values():
            self.unanswered(row, column)
        # Rows never begun (an error stopped the run): the next run asks what they need.
        for row in self.feed_rows.left():
            self.outcome.blocked.setdefault(row.row_id, set()).update(c.name for c in self.order)
            self.outcome.pending.add(row.row_id)
        self.write(force=True)
        if self.error is not None:
            raise self.error
        self.outcome.view = make_view(self.db_path, self.recipe)
        return self.outcome

    def feed(self) -> list[Planned]:
        """Begin steps of rows while fewer than ``ROWS_AHEAD`` requests wait (a step whose
        cells are stored asks nothing and the next is begun); the requests to ask."""
        asks: list[Planned] = []
        while len(self.waiting) < ROWS_AHEAD and (step := self.feed_rows.step()):
            asks += self.advance(step)
        return asks

    def done(self, row: SeedRow, name: str) -> bool:
        """Whether the row's column has settled: computed, or every sample answered, taken
        from the store or failed."""
        return name in self.begun[row.row_id] and not self.open[row.row_id][name]

    def advance(self, rows: Iterable[SeedRow]) -> list[Planned]:
        """Begin every column of ``rows`` whose reads are done; the requests to ask. A cell
        the store holds settles at once and may make more columns ready, so this goes on
        until none begins."""
        asks: list[Planned] = []
        todo = list(rows)
        while todo:
            again: dict[str, SeedRow] = {}
            for cell in [c for row in todo for c in self.begin(row)]:
                row, column, sample, ps, key = cell
                if key in self.stored:
                    self.reuse(row, column, sample, key, self.stored[key])
                elif all(p.key in self.answers for p in ps):
                    self.take(cell)
                else:
                    for p in ps:
                        if p.key in self.answers:
                            continue
                        if p.key not in self.waiting:
                            self.outcome.llm_cells_asked += 1
                            asks.append(p)
                        self.waiting.setdefault(p.key, []).append(cell)
                    continue
                self.open[row.row_id][column.name] -= 1
                again[row.row_id] = row
            todo = list(again.values())
        return asks

    def begin(self, row: SeedRow) -> list[PendingCell]:
        """Compute the row's local columns that are ready, in order (one may read the one
        before); plan the samples of its ready LLM columns."""
        planned: list[PendingCell] = []
        for column in self.order:
            if column.name in self.begun[row.row_id]:
                continue
            if not all(self.done(row, r) for r in column.reads):
                continue
            self.begun[row.row_id].add(column.name)
            values = self.ready(row, column)
            if values is None:
                continue
            if not column.is_llm:
                value, cause = column.compute(row.values, values,
                                              random_seed=self.recipe.random_seed,
                                              row_id=row.row_id)  # fmt: skip
                # What it read, too: a validation of a new answer is a new cell even when it
                # says the same.
                read = {r: values[r] for r in column.reads}
                key = cell_key(self.recipe.name, row.row_id, column.name, 0, read, value)
                self.keep(row, column, 0, key, value, cause)
                continue
            asked = cast(LlmColumn, column)
            self.open[row.row_id][column.name] = asked.samples
            for sample in range(asked.samples):
                requests = cell_requests(self.recipe, asked, row.row_id, sample, values)
                ps = [self.run.plan(r) for r in requests]
                key = cell_key(self.recipe.name, row.row_id, column.name, sample, requests_key(ps))
                planned.append(PendingCell(row, asked, sample, ps, key))
        return planned

    def settled(self, done: Sequence[tuple[Planned, Any]]) -> list[Planned]:
        """``LlmRun.ask_stream``'s callback: the cells waiting for these requests take their
        answers (None: failed) once all of a cell's are in, and the requests of their rows'
        columns that made ready."""
        rows: dict[str, SeedRow] = {}
        for p, completion in done:
            self.answers[p.key] = completion
            for cell in self.waiting.pop(p.key, []):
                row, column, _, ps, _ = cell
                if all(q.key in self.answers for q in ps):
                    self.take(cell)
                    self.open[row.row_id][column.name] -= 1
                    rows[row.row_id] = row
        asks: list[Planned] = []
        if self.error is None:
            try:
                asks = self.advance(rows.values()) + self.feed()
            except Exception as exc:
                # A cell that cannot be made (a template naming what an answer lacks) ends
                # the run; nothing new is asked, and the answers still coming are kept as
                # cells, written before the error is raised.
                self.error = exc
        self.write()
        return asks

    def write(self, force: bool = False) -> None:
        self.outcome.cells_written += self.writer.write(force)

    def ready(self, row: SeedRow, column: Column) -> dict[str, Any] | None:
        """The row's values the column reads, or None when one of them is held back."""
        values = self.outcome.values[row.row_id]
        if any(r not in values for r in column.reads):
            self.outcome.blocked.setdefault(row.row_id, set()).add(column.name)
            return None
        return dict(values)

    def keep(self, row: SeedRow, column: Column, sample: int, key: str, value: Any,
             cause: str | None = None, **more: Any) -> None:  # fmt: skip
        if sample == 0 and cause is None:
            self.outcome.values[row.row_id][column.name] = value
        elif cause is not None:
            self.outcome.rejected_by_cause[f"{column.name}: {cause.split(' (')[0]}"] += 1
            self.outcome.blocked.setdefault(row.row_id, set()).add(column.name)
        self.writer.add(row.row_id, row.index, column, sample, key, value, cause, **more)
        counts = self.outcome.cells_by_column.setdefault(column.name, Counter())
        counts["rejected" if cause else "ok"] += 1

    def take(self, cell: PendingCell) -> None:
        row, column, sample, ps, key = cell
        completions = [self.answers[p.key] for p in ps]
        if any(c is None for c in completions):
            self.unanswered(row, column)
            return
        self.answered(row, column, sample, key, ps, completions)

    def unanswered(self, row: SeedRow, column: Column) -> None:
        self.outcome.llm_cells_unanswered += 1
        self.outcome.blocked.setdefault(row.row_id, set()).add(column.name)
        self.outcome.pending.add(row.row_id)

    def reuse(self, row: SeedRow, column: Column, sample: int, key: str,
              cell: StoredCellValue) -> None:  # fmt: skip
        self.outcome.cells_reused += 1
        cause = cell.cause if cell.status != "ok" else None
        self.keep(row, column, sample, key, cell.value, cause, request_key=cell.request_key,
                  slot=cell.slot, model=cell.model)  # fmt: skip

    def answered(self, row: SeedRow, column: Column, sample: int, key: str,
                 ps: Sequence[Planned], completions: Sequence[Any]) -> None:  # fmt: skip
        value, cause = answer_value(self.recipe, column, ps, completions)
        first = completions[0]
        self.keep(
            row, column, sample, key, value, cause, request_key=ps[0].key, slot=first.slot,
            model=first.model,
            prompt_tokens=tokens(c.prompt_tokens for c in completions),
            completion_tokens=tokens(c.completion_tokens for c in completions),
        )  # fmt: skip


def llm_request(recipe: Recipe, column: LlmColumn, row_id: str, sample: int,
                values: dict[str, Any]) -> Any:  # fmt: skip
    """The first request of a cell (the only one but for a pairwise judge)."""
    return cell_requests(recipe, column, row_id, sample, values)[0]


def run_recipe(
    recipe: Recipe,
    db_path: str | Path,
    slots: SlotSource,
    *,
    version: str = RUN_VERSION,
    run_id: str | None,
    log: Log,
    base_dir: Path,
    limit: int | None = None,
) -> RecipeOutcome:
    """Generate ``recipe``'s rows (at most ``limit``) under ``version``; its outcome."""
    rows = seed_rows(recipe, Path(db_path), base_dir, limit)
    source = judging(recipe, slots)
    log.info(f"recipe {recipe.name}: {len(rows)} rows x {len(recipe.columns)} columns ({version})")
    with LlmRun(db_path, source, run_id=run_id, asset=f"recipe_{recipe.name}", log=log) as run:
        outcome = Generation(recipe, run, rows, version, run_id).generate()
    outcome.llm = run.metadata()
    if version == RUN_VERSION and recipe.seed is not None and recipe.seed.incremental:
        # Only now, with every cell of the run stored: a run that dies before reads its rows
        # again from the old mark.
        mark = advance_mark(Path(db_path), recipe, rows, outcome.pending, run_id)
        if mark is not None:
            outcome.seed_mark = mark.position
    return outcome


__all__ = [
    "PREVIEW_VERSION",
    "RUN_VERSION",
    "Generation",
    "PendingCell",
    "RecipeOutcome",
    "cell_requests",
    "llm_request",
    "run_recipe",
]
