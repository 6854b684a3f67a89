"""An ``expression`` column: a Jinja template over the row's columns (YAML ``expr``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field

from model_foundry.lib.recipes.columns.base import Column, ColumnAttributes, template_reads
from model_foundry.lib.recipes.problems import Problems
from model_foundry.lib.recipes.templates import render


class ExpressionAttributes(ColumnAttributes):
    type: Literal["expression"]
    expr: str = Field(description="A Jinja template over the row's columns.")


@dataclass(frozen=True, kw_only=True)
class ExpressionColumn(Column):
    column_type: ClassVar[str] = "expression"
    attributes: ClassVar[type[ColumnAttributes]] = ExpressionAttributes
    template_fields: ClassVar[tuple[str, ...]] = ("expr",)

    expr: str

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        with problems.field():
            return {"expr": problems.text(f"{at}.expr", raw.get("expr"))}
        return {}

    def reading(self) -> dict[str, frozenset[str]]:
        return {"expr": template_reads(self.expr)}

    def compute(
        self, seed: Mapping[str, Any], values: Mapping[str, Any], *, random_seed: int, row_id: str
    ) -> tuple[Any, str | None]:
        return render(self.expr, values), None


__all__ = ["ExpressionAttributes", "ExpressionColumn"]
