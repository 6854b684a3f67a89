"""Generating a recipe's rows row by row, every LLM call through
:class:`~model_foundry.lib.llm.LlmRun`.

A row's column begins as soon as the columns it reads are done in that row: seed, sampler,
expression and validation cells are computed there and then, LLM cells are asked in the
run's one growing round (``LlmRun.ask_stream``: plan, fit, dispatch under the slots' caps,
store). No column waits for other rows, so while one row waits for its judge another row's
first answer is already in flight. A pairwise judge's cell waits for both its orders. New
cells are written in batches (``CELLS_PER_WRITE``, ``WRITE_EVERY_S``) and at the end.

Exactly once: a cell's key hashes the recipe, the row, the column, the sample and what the
cell read (for an LLM cell, its request key, which covers the rendered prompt and the
parameters). Cells stored when the run starts (in any version, a preview's too) are taken
as they are and not asked again; an answer paid for before a run was killed is in the
completions store, so the next run takes it from there. A changed template changes the keys
of its column and of the columns that read it, and only those are asked.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_foundry.lib.gates.answers import body_text, target_language
from model_foundry.lib.gates.verdict import VERDICT_MAX_TOKENS
from model_foundry.lib.llm import Body, LlmRun, Request
from model_foundry.lib.llm.request import Planned, canonical
from model_foundry.lib.llm.run import Log, SlotSource
from model_foundry.lib.recipes import samplers
from model_foundry.lib.recipes.cells import StoredCell, make_view, recipe_cells, write_cells
from model_foundry.lib.recipes.pairwise import judge_system, pairwise_messages, pairwise_value
from model_foundry.lib.recipes.seeds import SeedRow, advance_mark, seed_rows
from model_foundry.lib.recipes.spec import JUDGE_ROLE, PAIR_ORDERS, Column, Recipe, levels
from model_foundry.lib.recipes.templates import render
from model_foundry.lib.recipes.validators import gate_cause, validate
from model_foundry.lib.slots.config import NoSlotForRoleError, SlotFile
from model_foundry.lib.tables.recipes import RecipeCellRow

RUN_VERSION = "run"
PREVIEW_VERSION = "preview"


@dataclass
class RecipeOutcome:
    """What a run did: rows, cells new and reused, requests, rejections by cause."""

    recipe: str
    version: str
    rows: int = 0
    cells_written: int = 0
    cells_reused: int = 0
    llm_cells_asked: int = 0
    llm_cells_unanswered: int = 0
    rejected_by_cause: Counter[str] = field(default_factory=Counter)
    # column -> status -> cells this run holds (new or reused)
    cells_by_column: dict[str, Counter[str]] = field(default_factory=dict)
    view: str | None = None
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    blocked: dict[str, set[str]] = field(default_factory=dict)
    # Rows with a request that got no answer: the next run asks it (and an incremental seed
    # reads them again, ``seeds.advance_mark``).
    pending: set[str] = field(default_factory=set)
    # An incremental seed's new mark (None: it stayed where it was).
    seed_mark: int | None = None
    llm: dict[str, Any] = field(default_factory=dict)

    def complete_rows(self) -> int:
        return sum(1 for rid in self.values if not self.blocked.get(rid))

    def metadata(self) -> dict[str, Any]:
        return {
            "recipe": self.recipe,
            "version": self.version,
            "rows": self.rows,
            "rows_complete": self.complete_rows(),
            "cells_written": self.cells_written,
            "cells_reused": self.cells_reused,
            "llm_cells_asked": self.llm_cells_asked,
            "llm_cells_unanswered": self.llm_cells_unanswered,
            "rejected_by_cause": dict(sorted(self.rejected_by_cause.items())),
            "cells_by_column": {c: dict(n) for c, n in self.cells_by_column.items()},
            "view": self.view,
            **({"seed_mark": self.seed_mark} if self.seed_mark is not None else {}),
            **self.llm,
        }


def _key(*parts: Any) -> str:
    return hashlib.sha256(canonical(list(parts)).encode("utf-8")).hexdigest()


def recipe_task(recipe: str, column: str) -> str:
    return f"recipe:{recipe}/{column}"


def request_seed(recipe: Recipe, row_id: str, column: Column, sample: int) -> int:
    """The ``seed`` parameter of a cell's request: the row and the sample make their own
    request (and key) even where two rows render the same prompt."""
    given = column.params.get("seed", recipe.random_seed)
    digest = hashlib.sha256(f"{given}\x00{row_id}\x00{column.name}\x00{sample}".encode())
    return int.from_bytes(digest.digest()[:4], "big") & 0x7FFFFFFF


def _messages(column: Column, values: Mapping[str, Any]) -> list[dict[str, str]]:
    messages = []
    if column.type == "llm_judge":
        # The judge reads its rubric and the verdict's shape; the schema only constrains.
        messages.append({"role": "system", "content": judge_system(column, values)})
    elif column.system:
        messages.append({"role": "system", "content": render(column.system, values)})
    messages.append({"role": "user", "content": render(str(column.prompt), values)})
    return messages


def llm_request(recipe: Recipe, column: Column, row_id: str, sample: int,
                values: Mapping[str, Any], order: str | None = None) -> Request:  # fmt: skip
    """One request of a cell; ``order`` is a pairwise judge's (``ab`` or ``ba``)."""
    params: dict[str, Any] = {**column.params, "seed": request_seed(recipe, row_id, column, sample)}
    if column.thinking is not None:
        params["thinking"] = column.thinking
    schema = column.schema()
    if schema is not None:
        # As the judge does: the schema is a parameter, part of the key, spelled per runtime.
        params["json_schema"] = dict(schema)
    if column.type == "llm_judge" and "max_tokens" not in column.params:
        params["max_tokens"] = verdict_tokens(column)
    if column.text is not None:
        # As the pipeline's translations ask: the bare text, its languages as parameters (a
        # translator slot's prompt format reads them; a chat slot it falls back to is given
        # the translation instruction, slots.request).
        for key in ("source_lang", "target_lang"):
            if (lang := getattr(column, key)) is not None:
                params[key] = render(lang, values)
        return Request(recipe_task(recipe.name, column.name), str(column.role),
                       Body(text=render(column.text, values)), params=params)  # fmt: skip
    if order is None:
        return Request(recipe_task(recipe.name, column.name), str(column.role),
                       Body(messages=_messages(column, values)), params=params)  # fmt: skip
    # Both orders share their prefix: one family, so one slot's prefix cache serves both.
    return Request(recipe_task(recipe.name, column.name), str(column.role),
                   Body(messages=pairwise_messages(column, values, order)), params=params,
                   family=f"{recipe_task(recipe.name, column.name)}:{row_id}")  # fmt: skip


# What each score beyond the dataset judge's two adds to a verdict: its name, its number, the
# JSON around them and some of the whitespace the grammar allows between fields.
SCORE_TOKENS = 16


def verdict_tokens(column: Column) -> int:
    """A judge column's ``max_tokens`` when its params set none: the dataset judge's budget
    (``VERDICT_MAX_TOKENS``: two scores and a reason of at most ``REASON_MAX`` characters),
    and ``SCORE_TOKENS`` more for each further score. A slot's smaller default would cut the
    verdict short, and a verdict cut short never parses (a real model's were, in
    ``demo --real``)."""
    scores = len(column.scores) * (2 if column.is_pairwise else 1)
    return VERDICT_MAX_TOKENS + SCORE_TOKENS * max(0, scores - 2)


def cell_requests(recipe: Recipe, column: Column, row_id: str, sample: int,
                  values: Mapping[str, Any]) -> list[Request]:  # fmt: skip
    """What one LLM cell asks: one request, or a pairwise judge's two orders."""
    if column.is_pairwise:
        return [llm_request(recipe, column, row_id, sample, values, o) for o in PAIR_ORDERS]
    return [llm_request(recipe, column, row_id, sample, values)]


def _requests_key(planned: Sequence[Planned]) -> Any:
    """What a cell's key takes of its requests: the one request key (as cells stored before
    pairwise judges have it), or the list of both orders' keys."""
    return planned[0].key if len(planned) == 1 else [p.key for p in planned]


def _tokens(counts: Iterable[int | None]) -> int | None:
    """A cell's tokens over its requests; None when no server reported them."""
    given = [n for n in counts if n is not None]
    return sum(given) if given else None


# A cell waiting for its requests (one, or a pairwise judge's two orders): its row, column,
# sample, requests and cell key.
_Cell = tuple[SeedRow, Column, int, list[Planned], str]

# New cells go to DuckDB this many at a time, or after this long, and at the end: one
# transaction per cell would make the file's lock the pace of a run.
CELLS_PER_WRITE = 500
WRITE_EVERY_S = 2.0
# Rows are begun a few at a time, while fewer than ROWS_AHEAD requests wait for an answer:
# the first requests go out after a few rows are planned, not after all of them, and the rest
# are planned while answers come (each settled request begins at most ROWS_PER_STEP rows).
ROWS_AHEAD = 256
ROWS_PER_STEP = 16


def compute(recipe: Recipe, row: SeedRow, column: Column,
            values: Mapping[str, Any]) -> tuple[Any, str | None]:  # fmt: skip
    """A seed, sampler, expression or validation cell's value, and why it is held back."""
    if column.type == "seed":
        return row.values.get(str(column.seed_field)), None
    if column.type == "sampler":
        return samplers.sample(column, recipe.random_seed, row.row_id), None
    if column.type == "expression":
        return render(str(column.expr), values), None
    cause = validate(column, values[str(column.target)], values)
    return cause is None, cause


def answer_value(recipe: Recipe, column: Column, ps: Sequence[Planned],
                 completions: Sequence[Any]) -> tuple[Any, str | None]:  # fmt: skip
    """An LLM cell's value from its requests' answers (a pairwise judge's two verdicts made
    one), and the first gate or parse failure that holds it back."""
    answers: list[Any] = []
    cause: str | None = None
    for p, completion in zip(ps, completions, strict=True):
        text = completion.content
        prompt = body_text(p.request.body.as_dict())
        # A text column's answer is a translation when it names a target: the script gate too.
        target = target_language([], p.request.params) if column.text is not None else None
        cause = cause or gate_cause(recipe, column, text, completion.finish_reason, prompt,
                                    target_lang=target)  # fmt: skip
        value: Any = text.strip()
        if column.schema() is not None:
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                cause = cause or "unparsed"
        answers.append(value)
    if not column.is_pairwise:
        return answers[0], cause
    # Kept as the judge gave them when an order is held back, for its cause's sake.
    verdicts = dict(zip(PAIR_ORDERS, answers, strict=True))
    return (verdicts if cause else pairwise_value(column, verdicts)), cause


class CellWriter:
    """New cells, written ``CELLS_PER_WRITE`` at a time or every ``WRITE_EVERY_S``."""

    def __init__(self, recipe: str, version: str, run_id: str | None, db_path: Path) -> None:
        self.recipe, self.version, self.run_id, self.db_path = recipe, version, run_id, db_path
        self.cells: list[RecipeCellRow] = []
        self.written_at = time.monotonic()

    def add(self, row: SeedRow, column: Column, sample: int, key: str, value: Any,
            cause: str | None, **more: Any) -> None:  # fmt: skip
        self.cells.append(RecipeCellRow(
            recipe=self.recipe, version=self.version, cell_key=key, row_id=row.row_id,
            row_index=row.index, column_name=column.name, column_type=column.type,
            sample_index=sample, value=json.dumps(value, ensure_ascii=False),
            status="rejected" if cause else "ok", cause=cause,
            request_key=more.get("request_key"), slot=more.get("slot"),
            model=more.get("model"), prompt_tokens=more.get("prompt_tokens"),
            completion_tokens=more.get("completion_tokens"), run_id=self.run_id,
        ))  # fmt: skip

    def write(self, force: bool = False) -> int:
        """The cells written now (none unless due, or ``force``)."""
        due = time.monotonic() - self.written_at >= WRITE_EVERY_S
        if not self.cells or not (force or due or len(self.cells) >= CELLS_PER_WRITE):
            return 0
        written = write_cells(self.db_path, self.cells)
        self.cells, self.written_at = [], time.monotonic()
        return written


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
        self.waiting: dict[str, list[_Cell]] = {}
        self.answers: dict[str, Any] = {}
        self.stored: dict[str, StoredCell] = {}
        self.writer = CellWriter(recipe.name, version, run_id, self.db_path)
        self.error: Exception | None = None
        self.feed_rows = RowFeed(rows)

    def generate(self) -> RecipeOutcome:
        self.stored = recipe_cells(self.db_path, self.recipe.name)
        first = self.feed()
        if first:
            roles = {str(c.role) for c in self.recipe.columns if c.is_llm}
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
        """Begin the next step of rows while fewer than ``ROWS_AHEAD`` requests wait, and
        more steps while those ask nothing (their cells are stored); the requests to ask."""
        asks: list[Planned] = []
        while not asks and len(self.waiting) < ROWS_AHEAD and (step := self.feed_rows.step()):
            asks = self.advance(step)
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

    def begin(self, row: SeedRow) -> list[_Cell]:
        """Compute the row's local columns that are ready, in order (one may read the one
        before); plan the samples of its ready LLM columns."""
        planned: list[_Cell] = []
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
                value, cause = compute(self.recipe, row, column, values)
                # What it read, too: a validation of a new answer is a new cell even when it
                # says the same.
                read = {r: values[r] for r in column.reads}
                key = _key(self.recipe.name, row.row_id, column.name, 0, read, value)
                self.keep(row, column, 0, key, value, cause)
                continue
            self.open[row.row_id][column.name] = column.samples
            for sample in range(column.samples):
                requests = cell_requests(self.recipe, column, row.row_id, sample, values)
                ps = [self.run.plan(r) for r in requests]
                key = _key(self.recipe.name, row.row_id, column.name, sample, _requests_key(ps))
                planned.append((row, column, sample, ps, key))
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
        self.writer.add(row, column, sample, key, value, cause, **more)
        counts = self.outcome.cells_by_column.setdefault(column.name, Counter())
        counts["rejected" if cause else "ok"] += 1

    def take(self, cell: _Cell) -> None:
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
              cell: StoredCell) -> None:  # fmt: skip
        self.outcome.cells_reused += 1
        self.keep(row, column, sample, key, cell.value, cell.cause if cell.status != "ok" else None)

    def answered(self, row: SeedRow, column: Column, sample: int, key: str,
                 ps: Sequence[Planned], completions: Sequence[Any]) -> None:  # fmt: skip
        value, cause = answer_value(self.recipe, column, ps, completions)
        first = completions[0]
        self.keep(
            row, column, sample, key, value, cause, request_key=ps[0].key, slot=first.slot,
            model=first.model,
            prompt_tokens=_tokens(c.prompt_tokens for c in completions),
            completion_tokens=_tokens(c.completion_tokens for c in completions),
        )  # fmt: skip


def check_roles(recipe: Recipe, slot_file: SlotFile, profile: str | None) -> None:
    """Each LLM column's role is in the slot file (read at run time) and has a live slot in
    the profile; else one sentence naming the recipe's file and the column's role."""
    known = slot_file.known_roles()
    for column in (c for c in recipe.columns if c.is_llm):
        where = f"columns.{column.name}.role"
        if column.role == JUDGE_ROLE:
            try:
                slot_file.for_judging(profile)
            except NoSlotForRoleError as exc:
                raise recipe.error(where, str(exc)) from None
            continue
        if column.role not in known:
            raise recipe.error(
                where,
                f"the slot file {slot_file.source} has no role {column.role!r} "
                f"(it has: {', '.join(sorted(known))})",
            )
        try:
            slot_file.slots_for_role(str(column.role), profile)
        except NoSlotForRoleError as exc:
            raise recipe.error(where, str(exc)) from None


def _judging(recipe: Recipe, slots: SlotSource) -> SlotSource:
    """The slots, roles checked; with a column asking the judge role, with the judge slot
    live and serving it alone (as dataset judgements do)."""
    from model_foundry.lib.datasets.judge import JudgeSlots

    check_roles(recipe, slots.load(), slots.profile)
    if not any(c.is_llm and c.role == JUDGE_ROLE for c in recipe.columns):
        return slots
    return JudgeSlots(slots)


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
    source = _judging(recipe, slots)
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
    "RecipeOutcome",
    "cell_requests",
    "check_roles",
    "llm_request",
    "recipe_task",
    "run_recipe",
]
