"""A checked dataset recipe: its columns (``columns/``, a class per type), its seed, rows,
gates and schedule. ``parse.py`` reads one from its YAML and ``graph.py`` orders its
columns.

A recipe is a small graph of named columns (the vocabulary of NVIDIA NeMo Data Designer's
column types, which a user of it will recognise): ``seed`` (a field of the seed rows),
``sampler``, ``expression``, ``llm_text``, ``llm_structured``, ``llm_judge`` and
``validation``. Everything that can be checked without the slot file or the seed rows is
checked when it is read: field names and types, templates that name columns the recipe
lacks, cycles, JSON schemas. What needs the slot file (roles) or the seed rows (their fields)
is checked by the run, in the same form of sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from model_foundry.lib.gates.config import GateConfig
from model_foundry.lib.recipes.columns.base import Column
from model_foundry.lib.recipes.problems import RecipeError


@dataclass(frozen=True)
class Seed:
    """Where seed rows come from: a file (JSONL, CSV, Parquet) or read-only SQL.
    ``incremental`` names an integer column of the query's rows that grows with every write
    (the inbox's ``commit_seq``): each run takes only the rows past the last run's mark."""

    file: str | None = None
    sql: str | None = None
    incremental: str | None = None


@dataclass(frozen=True)
class Recipe:
    """A checked recipe; ``source`` is the file it came from (for sentences)."""

    name: str
    source: str
    columns: tuple[Column, ...]
    seed: Seed | None = None
    rows: int | None = None
    random_seed: int = 0
    schedule: str | None = None
    description: str | None = None
    gates: GateConfig = field(default_factory=GateConfig)
    gates_on: bool = True
    # ``export: {on_schedule: true}``: the recipe's job (and so its schedule) exports too.
    export_on_schedule: bool = False
    # The task its requests are sent under; None: ``recipe:<name>/<column>``. Built-in
    # recipes only (``collect.py``): not a YAML field.
    task: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def roles(self) -> dict[str, str]:
        """column -> role of each LLM column."""
        return {c.name: role for c in self.columns if (role := c.slot_role()) is not None}

    def seed_fields(self) -> set[str]:
        """The seed rows' fields its columns take."""
        return {f for c in self.columns for f in c.seed_fields()}

    def error(self, where: str, problem: str) -> RecipeError:
        return RecipeError(f"{self.source}: {where}: {problem}")


__all__ = ["Recipe", "RecipeError", "Seed"]
