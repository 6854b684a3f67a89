"""The ``unparsed`` gate: a structured answer that is not strict JSON or breaks its schema.

The schema is the JSON Schema subset the slots constrain answers with; a judge verdict is read
by the judging's own :func:`verdict.parse_verdict`, so a kept verdict is one it could read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from model_foundry.lib.gates.verdict import VERDICT_SCHEMA, VerdictError, parse_verdict


def _type_ok(value: Any, kind: Any) -> bool:
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }
    kinds = kind if isinstance(kind, list) else [kind]
    return any(checks.get(k, lambda _: True)(value) for k in kinds)


def schema_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    """Why ``value`` breaks ``schema`` (the JSON Schema subset the slots constrain answers
    with: type, required, properties, additionalProperties, items, enum, bounds), else None."""
    if "type" in schema and not _type_ok(value, schema["type"]):
        return f"not of type {schema['type']}"
    if "enum" in schema and value not in schema["enum"]:
        return "not one of its enum"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"below {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"above {schema['maximum']}"
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        return f"longer than {schema['maxLength']}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"fewer than {schema['minItems']} items"
        if len(value) > schema.get("maxItems", len(value)):
            return f"more than {schema['maxItems']} items"
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                return f"no {name}"
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return f"unexpected {sorted(set(value) - set(props))[0]}"
        for name, sub in props.items():
            if name in value and (problem := schema_problem(value[name], sub)):
                return f"{name}: {problem}"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            if problem := schema_problem(item, schema["items"]):
                return problem
    return None


def _not_json(name: str) -> Any:
    """``NaN``/``Infinity``, which Python's json reads and JSON (RFC 8259) has not."""
    raise ValueError(f"{name} is not JSON")


def is_unparsed(answer: str, schema: Mapping[str, Any]) -> bool:
    """A structured answer that does not parse or validate; a verdict as the judge does."""
    if dict(schema) == dict(VERDICT_SCHEMA):
        try:
            parse_verdict(answer)
        except VerdictError:
            return True
        return False
    try:
        value = json.loads(answer, parse_constant=_not_json)
    except (json.JSONDecodeError, ValueError):
        return True
    return schema_problem(value, schema) is not None


__all__ = ["is_unparsed", "schema_problem"]
