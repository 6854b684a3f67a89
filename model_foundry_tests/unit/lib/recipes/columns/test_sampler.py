"""Sampler columns: the same value for the same recipe seed, row and column, whatever else."""

from __future__ import annotations

from collections import Counter

from model_foundry.lib.recipes.columns.sampler import SamplerColumn


def test_a_draw_depends_on_the_seed_the_row_and_the_column_only() -> None:
    tone = SamplerColumn(name="tone", sampler="category", values=("a", "b", "c"))
    draws = [tone.sample(3, f"row{i}") for i in range(200)]
    # Again, in reverse order: the same values.
    assert [tone.sample(3, f"row{i}") for i in reversed(range(200))] == draws[::-1]
    assert len(set(draws)) == 3
    # Another recipe seed or another column name draws otherwise.
    assert [tone.sample(4, f"row{i}") for i in range(200)] != draws
    other = SamplerColumn(name="mood", sampler="category", values=("a", "b", "c"))
    assert [other.sample(3, f"row{i}") for i in range(200)] != draws


def test_weights_and_ranges_are_kept() -> None:
    weighted = SamplerColumn(name="w", sampler="category", values=("x", "y"), weights=(1.0, 0.0))
    assert {weighted.sample(0, f"r{i}") for i in range(100)} == {"x"}
    pick = SamplerColumn(name="p", sampler="choice", values=(1, 2))
    assert set(Counter(pick.sample(0, f"r{i}") for i in range(100))) == {1, 2}
    whole = SamplerColumn(name="n", sampler="uniform", low=2, high=4, integer=True)
    assert {whole.sample(0, f"r{i}") for i in range(100)} == {2, 3, 4}
    real = SamplerColumn(name="x", sampler="uniform", low=0.5, high=0.75)
    values = [real.sample(0, f"r{i}") for i in range(100)]
    assert all(0.5 <= v <= 0.75 for v in values) and len(set(values)) == 100
