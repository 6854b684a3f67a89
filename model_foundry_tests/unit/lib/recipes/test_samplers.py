"""Sampler columns: the same value for the same recipe seed, row and column, whatever else."""

from __future__ import annotations

from collections import Counter

from model_foundry.lib.recipes.samplers import sample
from model_foundry.lib.recipes.spec import Column


def test_a_draw_depends_on_the_seed_the_row_and_the_column_only() -> None:
    tone = Column("tone", "sampler", sampler="category", values=("a", "b", "c"))
    draws = [sample(tone, 3, f"row{i}") for i in range(200)]
    # Again, in reverse order: the same values.
    assert [sample(tone, 3, f"row{i}") for i in reversed(range(200))] == draws[::-1]
    assert len(set(draws)) == 3
    # Another recipe seed or another column name draws otherwise.
    assert [sample(tone, 4, f"row{i}") for i in range(200)] != draws
    other = Column("mood", "sampler", sampler="category", values=("a", "b", "c"))
    assert [sample(other, 3, f"row{i}") for i in range(200)] != draws


def test_weights_and_ranges_are_kept() -> None:
    weighted = Column("w", "sampler", sampler="category", values=("x", "y"), weights=(1.0, 0.0))
    assert {sample(weighted, 0, f"r{i}") for i in range(100)} == {"x"}
    pick = Column("p", "sampler", sampler="choice", values=(1, 2))
    assert set(Counter(sample(pick, 0, f"r{i}") for i in range(100))) == {1, 2}
    whole = Column("n", "sampler", sampler="uniform", low=2, high=4, integer=True)
    assert {sample(whole, 0, f"r{i}") for i in range(100)} == {2, 3, 4}
    real = Column("x", "sampler", sampler="uniform", low=0.5, high=0.75)
    values = [sample(real, 0, f"r{i}") for i in range(100)]
    assert all(0.5 <= v <= 0.75 for v in values) and len(set(values)) == 100
