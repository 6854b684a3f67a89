"""A ``sampler`` column: a value drawn from the recipe's ``random_seed``, the row and the
column.

Each draw seeds its own generator from a hash of the three, so a row's value is the same on
every run and in every process, whatever order rows are generated in and however many rows
there are: a rerun never changes a row, so it never re-asks the cells that read it.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field

from model_foundry.lib.recipes.columns.base import Column, ColumnAttributes
from model_foundry.lib.recipes.problems import Problems

SAMPLERS = ("category", "uniform", "choice")


class SamplerAttributes(ColumnAttributes):
    type: Literal["sampler"]
    sampler: Literal["category", "uniform", "choice"] = Field(
        description="category (values, weights), choice (values) or uniform (low, high)."
    )
    values: list[Any] | None = Field(default=None, description="The values drawn from.")
    weights: list[float] | None = Field(
        default=None, description="A category sampler's weights, one per value."
    )
    low: float | None = Field(default=None, description="A uniform sampler's lowest value.")
    high: float | None = Field(default=None, description="A uniform sampler's highest value.")
    integer: bool = Field(default=False, description="A uniform sampler draws integers.")


def rng(random_seed: int, row_id: str, column: str) -> random.Random:
    digest = hashlib.sha256(f"{random_seed}\x00{row_id}\x00{column}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True, kw_only=True)
class SamplerColumn(Column):
    column_type: ClassVar[str] = "sampler"
    attributes: ClassVar[type[ColumnAttributes]] = SamplerAttributes

    sampler: str
    values: tuple[Any, ...] = ()
    weights: tuple[float, ...] | None = None
    low: float = 0.0
    high: float = 0.0
    integer: bool = False

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        kind = raw.get("sampler")
        if kind not in SAMPLERS:
            problems.add(f"{at}.sampler", f"must be one of {', '.join(SAMPLERS)}")
            return {}
        out: dict[str, Any] = {"sampler": kind}
        if kind in ("category", "choice"):
            values = raw.get("values")
            if not isinstance(values, list) or not values:
                problems.add(f"{at}.values", "must be a non-empty list")
                return out
            out["values"] = tuple(values)
            if raw.get("weights") is not None:
                with problems.field():
                    out["weights"] = _weights(raw["weights"], kind, len(values), at, problems)
            return out
        for key in ("low", "high"):
            with problems.field():
                out[key] = problems.number(f"{at}.{key}", raw.get(key))
        if {"low", "high"} <= set(out) and out["high"] < out["low"]:
            problems.add(f"{at}.high", "must be >= low")
        with problems.field():
            out["integer"] = bool(raw.get("integer", False))
        return out

    def value_type(self) -> str:
        if self.sampler != "uniform":
            return "string"
        return "integer" if self.integer else "number"

    def compute(
        self, seed: Mapping[str, Any], values: Mapping[str, Any], *, random_seed: int, row_id: str
    ) -> tuple[Any, str | None]:
        return self.sample(random_seed, row_id), None

    def sample(self, random_seed: int, row_id: str) -> Any:
        """The value for the row ``row_id``."""
        r = rng(random_seed, row_id, self.name)
        if self.sampler == "category":
            return r.choices(list(self.values), weights=self.weights)[0]
        if self.sampler == "choice":
            return r.choice(list(self.values))
        if self.integer:
            return r.randint(int(self.low), int(self.high))
        return r.uniform(self.low, self.high)


def _weights(raw: Any, kind: str, count: int, at: str, problems: Problems) -> tuple[float, ...]:
    if kind == "choice":
        raise problems.error(f"{at}.weights", "is for the category sampler only")
    if not isinstance(raw, list) or len(raw) != count:
        raise problems.error(f"{at}.weights", "must be a list as long as values")
    weights = tuple(problems.number(f"{at}.weights", w) for w in raw)
    if any(w < 0 for w in weights) or not sum(weights):
        raise problems.error(f"{at}.weights", "must be >= 0 with a positive sum")
    return weights


__all__ = ["SAMPLERS", "SamplerAttributes", "SamplerColumn", "rng"]
