"""The column types, found by their modules: each module of this package may define column
classes (subclasses of ``base.Column`` with a ``column_type``), and this registry is the one
place that picks code by a column's type. Adding a type is adding a module here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from typing import Annotated, Any, Union

from pydantic import Field

from model_foundry.lib.recipes import columns as package
from model_foundry.lib.recipes.columns.base import Column, ColumnAttributes
from model_foundry.lib.recipes.problems import NAME, Problems

# The order users read them in (docs, sentences); a type not listed goes after them.
_ORDER = ("seed", "sampler", "expression", "llm_text", "llm_structured", "llm_judge",
          "validation")  # fmt: skip


def _subclasses(cls: type[Column]) -> list[type[Column]]:
    return [s for c in cls.__subclasses__() for s in (c, *_subclasses(c))]


def find_column_classes() -> dict[str, type[Column]]:
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    found = {c.column_type: c for c in _subclasses(Column) if c.column_type}
    rank = {kind: i for i, kind in enumerate(_ORDER)}
    return dict(sorted(found.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


COLUMN_CLASSES: Mapping[str, type[Column]] = find_column_classes()
COLUMN_TYPES: tuple[str, ...] = tuple(COLUMN_CLASSES)
_COMMON = {"name", "type", "description"}


def column_class(kind: str) -> type[Column]:
    return COLUMN_CLASSES[kind]


def read_column(
    raw: Any, i: int, seen: set[str], problems: Problems
) -> tuple[str | None, Column | None]:
    """The column ``raw`` (the ``i``-th of the recipe) gives: its name (None when it has no
    usable one) and the column (None when it has a problem, kept in ``problems``)."""
    at = f"columns[{i}]"
    if not isinstance(raw, dict):
        problems.add(at, "must be a mapping with name and type")
        return None, None
    name = raw.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        problems.add(f"{at}.name", "must be a lower-case identifier (a-z, 0-9, _)")
        return None, None
    at = f"columns.{name}"
    before = len(problems)
    if name in seen:
        problems.add(f"{at}.name", "is given to two columns")
    kind = raw.get("type")
    if kind not in COLUMN_CLASSES:
        problems.add(f"{at}.type", f"unknown column type {kind!r} (known: "
                     f"{', '.join(COLUMN_TYPES)})")  # fmt: skip
        return name, None
    cls = COLUMN_CLASSES[kind]
    for unknown in sorted(set(raw) - _COMMON - cls.yaml_fields()):
        problems.add(f"{at}.{unknown}", f"is not a field of a {kind} column")
    column = cls.read(name, raw, at, problems)
    return name, column if len(problems) == before else None


def column_attributes() -> Any:
    """The YAML of a column of any type, as one typed model (what ``dg`` shows)."""
    models: tuple[type[ColumnAttributes], ...] = tuple(
        c.attributes for c in COLUMN_CLASSES.values()
    )
    # A union of classes known only at run time: the subscript, not the | operator.
    return Annotated[Union[models], Field(discriminator="type")]  # noqa: UP007


__all__ = [
    "COLUMN_CLASSES",
    "COLUMN_TYPES",
    "column_attributes",
    "column_class",
    "find_column_classes",
    "read_column",
]
