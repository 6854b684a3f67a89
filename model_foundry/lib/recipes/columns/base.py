"""What every recipe column is: a name, the columns it reads, its YAML fields and how its
cells are made. Each column type is a subclass in a module of its own in this package (found
by ``registry.py``), with its own fields, their checks, what it reads and what it computes or
asks; the rest of ``lib/recipes`` asks a column, never its type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field

from model_foundry.lib.recipes.problems import Problems
from model_foundry.lib.recipes.templates import TemplateError, columns_read


class ColumnAttributes(BaseModel):
    """A column as its YAML gives it; each type's model adds its ``type`` and fields. These
    models are what ``dg`` shows of a column; the column's own checks (``parse``) are what
    refuse a recipe, in sentences naming the file and the field."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The column's name (a-z, 0-9, _), its SQL and Jinja name.")
    description: str | None = Field(default=None, description="What the column holds.")


@dataclass(frozen=True, kw_only=True)
class Column:
    """One column of a recipe (a subclass per type)."""

    column_type: ClassVar[str] = ""
    attributes: ClassVar[type[ColumnAttributes]] = ColumnAttributes
    # Fields that are Jinja templates over the row's columns, checked in this order.
    template_fields: ClassVar[tuple[str, ...]] = ()
    # Whether its cells are asked of a slot (else computed where the row is).
    is_llm: ClassVar[bool] = False
    # Which column makes an exported row's chat: the last of the highest rank (0: never).
    chat_rank: ClassVar[int] = 0

    name: str

    @classmethod
    def yaml_fields(cls) -> set[str]:
        """The fields its YAML may give besides name, type and description."""
        return set(cls.attributes.model_fields) - {"name", "type", "description"}

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        """The type's fields from its YAML; each problem kept in ``problems``."""
        return {}

    @classmethod
    def read(cls, name: str, raw: Mapping[str, Any], at: str, problems: Problems) -> Self | None:
        """The column ``raw`` gives, or None when ``problems`` got one of its problems."""
        before = len(problems)
        fields = cls.parse(raw, at, problems)
        for key in cls.template_fields:
            template = raw.get(key)
            if isinstance(template, str):
                with problems.field():
                    try:
                        columns_read(template)
                    except TemplateError as exc:
                        raise problems.error(f"{at}.{key}", f"template {exc}") from None
        if len(problems) > before:
            return None
        return cls(name=name, **fields)

    def reading(self) -> dict[str, frozenset[str]]:
        """The columns each of its fields reads, the field to name first when one of them is
        missing first."""
        return {}

    @cached_property
    def reads(self) -> tuple[str, ...]:
        """Every column it reads."""
        return tuple(sorted(set().union(*self.reading().values())))

    def seed_fields(self) -> tuple[str, ...]:
        """The seed rows' fields it takes."""
        return ()

    def slot_role(self) -> str | None:
        """The slot role its cells are asked of (LLM columns)."""
        return None

    def value_type(self) -> str:
        """The JSON type of its value in the view and the export: string, integer, number,
        boolean, or json (a structured answer, with its ``sub_columns``)."""
        return "json" if self.schema() is not None else "string"

    def schema(self) -> Mapping[str, Any] | None:
        """The JSON schema an answer is constrained to (None: free text)."""
        return None

    def sub_columns(self) -> dict[str, str]:
        """Typed sub-columns of a structured value: property -> JSON type."""
        return {}

    def compute(
        self, seed: Mapping[str, Any], values: Mapping[str, Any], *, random_seed: int, row_id: str
    ) -> tuple[Any, str | None]:
        """A computed cell's value (from the row's ``seed`` values and the columns it reads)
        and why it is held back (None: it is not)."""
        raise TypeError(f"a {self.column_type} column is asked, not computed")


def template_reads(*templates: str | None) -> frozenset[str]:
    """The columns the given templates (None: not given) read."""
    return frozenset().union(*(columns_read(t) for t in templates if t is not None))


__all__ = ["Column", "ColumnAttributes", "template_reads"]
