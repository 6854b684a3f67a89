"""The registry finds each column type by its class, in the order users read them; a type
defined in one more module is found the same way, its fields checked as its class says."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from model_foundry.lib.recipes.columns import registry
from model_foundry.lib.recipes.columns.base import Column, ColumnAttributes
from model_foundry.lib.recipes.problems import Problems


def test_the_seven_types_are_found_in_order() -> None:
    assert registry.COLUMN_TYPES == ("seed", "sampler", "expression", "llm_text",
                                     "llm_structured", "llm_judge", "validation")  # fmt: skip
    assert all(registry.column_class(k).column_type == k for k in registry.COLUMN_TYPES)


class _EchoAttributes(ColumnAttributes):
    type: Literal["echo"]
    times: int = 1


@dataclass(frozen=True, kw_only=True)
class _EchoColumn(Column):
    column_type: ClassVar[str] = "echo"
    attributes: ClassVar[type[ColumnAttributes]] = _EchoAttributes

    times: int

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        with problems.field():
            return {"times": problems.integer(f"{at}.times", raw.get("times", 1), 1)}
        return {}

    def compute(self, seed: Mapping[str, Any], values: Mapping[str, Any], *, random_seed: int,
                row_id: str) -> tuple[Any, str | None]:  # fmt: skip
        return row_id * self.times, None


def test_a_type_in_another_module_is_found_and_reads_its_own_fields() -> None:
    found = registry.find_column_classes()
    assert list(found)[-1] == "echo" and found["echo"] is _EchoColumn
    problems = Problems("r/defs.yaml")
    column = _EchoColumn.read("e", {"name": "e", "type": "echo", "times": 2}, "columns.e",
                              problems)  # fmt: skip
    assert column is not None and column.compute({}, {}, random_seed=0, row_id="ab") == (
        "abab",
        None,
    )
    assert _EchoColumn.read("e", {"times": 0}, "columns.e", problems) is None
    assert [str(p) for p in problems.found] == ["r/defs.yaml: columns.e.times: must be an "
                                                "integer >= 1"]  # fmt: skip
