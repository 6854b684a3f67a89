"""The column graph of a recipe: every column it reads exists, no cycle, and the columns in
waves (each reads only columns of earlier waves). Apart from the run (``generate.py``), which
walks it row by row."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from model_foundry.lib.recipes.columns.base import Column
from model_foundry.lib.recipes.problems import Problems
from model_foundry.lib.recipes.spec import Recipe


def check_graph(columns: Sequence[Column], names: Collection[str], problems: Problems) -> None:
    """Keep in ``problems`` each read of a column not in ``names`` (the recipe's columns,
    also those with problems of their own), each column reading itself, and a cycle."""
    selfish: set[str] = set()
    for c in columns:
        reading = c.reading()
        for read in c.reads:
            if read not in names:
                key = next(k for k, reads in reading.items() if read in reads)
                problems.add(f"columns.{c.name}.{key}",
                             f"names column {read!r}, which the recipe does not have")  # fmt: skip
            elif read == c.name:
                selfish.add(c.name)
                problems.add(f"columns.{c.name}", "reads itself")
    cycle = find_cycle([c for c in columns if c.name not in selfish])
    if cycle:
        problems.add(f"columns.{cycle[0]}",
                     f"is part of a cycle ({' -> '.join([*cycle, cycle[0]])})")  # fmt: skip


def find_cycle(columns: Sequence[Column]) -> list[str] | None:
    """A cycle among the columns' reads (in order), or None."""
    reads = {c.name: c.reads for c in columns}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for nxt in reads.get(name, ()):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :]
            if nxt in reads and not state.get(nxt) and (found := visit(nxt)):
                return found
        path.pop()
        state[name] = 2
        return None

    for c in columns:
        if not state.get(c.name) and (found := visit(c.name)):
            return found
    return None


def levels(recipe: Recipe) -> list[list[Column]]:
    """The columns in waves: each wave reads only columns of earlier waves."""
    done: set[str] = set()
    waves: list[list[Column]] = []
    left = list(recipe.columns)
    while left:
        wave = [c for c in left if set(c.reads) <= done]
        waves.append(wave)
        done |= {c.name for c in wave}
        left = [c for c in left if c.name not in done]
    return waves


def dependants(recipe: Recipe, name: str) -> set[str]:
    """Columns that read ``name``, directly or through others."""
    out: set[str] = set()
    frontier = {name}
    while frontier:
        frontier = {c.name for c in recipe.columns if set(c.reads) & frontier} - out
        out |= frontier
    return out


__all__ = ["check_graph", "dependants", "find_cycle", "levels"]
