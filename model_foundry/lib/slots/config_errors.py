"""A slot file's first validation error as ``<field>: <problem>``, in the user's words."""

from __future__ import annotations

import re
from typing import Any


def _format_loc(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def field_problem(err: Any) -> str:
    """``<field>: <problem>`` for one of pydantic's ``ValidationError.errors()``."""
    loc = _format_loc(tuple(p for p in err["loc"]))
    msg = str(err["msg"])
    # Our cross-field validators already put the field in front of the message.
    msg = msg.removeprefix("Value error, ")
    if re.match(r"^[\w.-]+(\.\d+)?: ", msg):
        prefix = f"slots.{err['loc'][1]}." if loc.startswith("slots.") else ""
        return f"{prefix}{msg}"
    return f"{loc}: {_friendlier(err, msg)}"


def _friendlier(err: Any, msg: str) -> str:
    ctx = err.get("ctx") or {}
    kind = err.get("type")
    if kind == "greater_than_equal":
        return f"must be >= {ctx.get('ge')}"
    if kind == "greater_than":
        return f"must be > {ctx.get('gt')}"
    if kind == "less_than_equal":
        return f"must be <= {ctx.get('le')}"
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "unknown field (check the spelling)"
    return msg


__all__ = ["field_problem"]
