"""Sampler columns: a value drawn from the recipe's ``random_seed``, the row and the column.

Each draw seeds its own generator from a hash of the three, so a row's value is the same on
every run and in every process, whatever order rows are generated in and however many rows
there are: a rerun never changes a row, so it never re-asks the cells that read it.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from model_foundry.lib.recipes.spec import Column


def rng(random_seed: int, row_id: str, column: str) -> random.Random:
    digest = hashlib.sha256(f"{random_seed}\x00{row_id}\x00{column}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sample(column: Column, random_seed: int, row_id: str) -> Any:
    """The sampler ``column``'s value for the row ``row_id``."""
    r = rng(random_seed, row_id, column.name)
    if column.sampler == "category":
        return r.choices(list(column.values), weights=column.weights)[0]
    if column.sampler == "choice":
        return r.choice(list(column.values))
    low, high = float(column.low or 0), float(column.high or 0)
    if column.integer:
        return r.randint(int(low), int(high))
    return r.uniform(low, high)


__all__ = ["rng", "sample"]
