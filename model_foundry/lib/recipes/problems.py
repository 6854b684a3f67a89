"""What is wrong with a recipe, as sentences naming the file and the field.

A recipe's checks go on past a problem: :class:`Problems` keeps each one, so ``recipe check``
lists them all while the asset fails with the first. A check of one field raises
:class:`RecipeError` at its first problem (a field has one sentence); :meth:`Problems.field`
keeps that sentence and lets the next field be checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from model_foundry.lib.errors import UserError

# Column names become SQL column names of the recipe's view and Jinja names: identifiers only.
NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class RecipeError(UserError):
    """A recipe that cannot run; the message is one sentence naming the file and the field."""


class Problems:
    """The problems found in the recipe read from ``source``, in the order they were found."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.found: list[RecipeError] = []

    def error(self, where: str, problem: str) -> RecipeError:
        return RecipeError(f"{self.source}: {where}: {problem}")

    def add(self, where: str, problem: str) -> None:
        self.found.append(self.error(where, problem))

    @contextmanager
    def field(self) -> Iterator[None]:
        """Keep the sentence a check raises, and go on with the next."""
        try:
            yield
        except RecipeError as exc:
            self.found.append(exc)

    def __len__(self) -> int:
        return len(self.found)

    # The checks of one field: each returns the value or raises the field's sentence.

    def text(self, where: str, value: Any, *, required: bool = True) -> str | None:
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.error(where, "must be a non-empty string")
        return value

    def integer(self, where: str, value: Any, low: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise self.error(where, f"must be an integer >= {low}")
        return value

    def number(self, where: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(where, "must be a number")
        return float(value)

    def flag(self, where: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error(where, "must be true or false")
        return value

    def json_schema(self, where: str, value: Any, *, structured: bool) -> dict[str, Any]:
        """A valid JSON schema; ``structured``: an object schema whose properties are
        identifiers (they become sub-columns)."""
        if not isinstance(value, dict):
            raise self.error(where, "must be a JSON schema (a mapping)")
        import jsonschema  # only a recipe with a schema pays its import

        try:
            jsonschema.Draft202012Validator.check_schema(value)
        except jsonschema.SchemaError as exc:
            at = ".".join(str(p) for p in exc.absolute_path)
            raise self.error(
                f"{where}.{at}" if at else where, f"is not a valid JSON schema ({exc.message})"
            ) from None
        if structured and (
            value.get("type") != "object" or not isinstance(value.get("properties"), dict)
        ):
            raise self.error(where, "must be an object schema with properties (its sub-columns)")
        for prop in (value.get("properties") or {}) if structured else ():
            if not NAME.match(str(prop)):
                raise self.error(f"{where}.properties.{prop}", "must be a lower-case identifier")
        return value


__all__ = ["NAME", "Problems", "RecipeError"]
