"""A ``seed`` column: a field of the seed rows (YAML ``field``, the column's name unless
given)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field

from model_foundry.lib.recipes.columns.base import Column, ColumnAttributes
from model_foundry.lib.recipes.problems import Problems


class SeedAttributes(ColumnAttributes):
    type: Literal["seed"]
    field: str | None = Field(
        default=None, description="The seed rows' field it takes; unset: the column's name."
    )


@dataclass(frozen=True, kw_only=True)
class SeedColumn(Column):
    column_type: ClassVar[str] = "seed"
    attributes: ClassVar[type[ColumnAttributes]] = SeedAttributes

    seed_field: str

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        with problems.field():
            return {"seed_field": problems.text(f"{at}.field", raw.get("field", raw["name"]))}
        return {}

    def seed_fields(self) -> tuple[str, ...]:
        return (self.seed_field,)

    def compute(
        self, seed: Mapping[str, Any], values: Mapping[str, Any], *, random_seed: int, row_id: str
    ) -> tuple[Any, str | None]:
        return seed.get(self.seed_field), None


__all__ = ["SeedAttributes", "SeedColumn"]
