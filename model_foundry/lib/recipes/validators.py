"""Validation columns and the quality gates: why a cell is held back, or None.

Model-written Python is parsed (``ast.parse``), never run. A failing check keeps its cell in
DuckDB with the cause (``status = 'rejected'``), so the row stays queryable and is left out
of what is exported.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import jsonschema

from model_foundry.lib.datasets.gates import gate
from model_foundry.lib.recipes.spec import Column, Recipe

_PROSE_GATES = frozenset({"empty", "wrong_script", "repetition", "echo"})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _code(text: str) -> str:
    """The code of an answer: inside its first fenced block when it has one."""
    fenced = re.search(r"```[\w+-]*\n(.*?)```", text, re.S)
    return fenced.group(1) if fenced else text


def validate(column: Column, value: Any) -> str | None:
    """Why ``value`` (the target column's) fails ``column``'s checks, in a few words; None
    when it passes."""
    text = _text(value)
    if column.min_length is not None and len(text) < column.min_length:
        return f"shorter than {column.min_length} characters"
    if column.max_length is not None and len(text) > column.max_length:
        return f"longer than {column.max_length} characters"
    if column.regex is not None and not re.search(column.regex, text):
        return f"does not match {column.regex!r}"
    if column.json_schema is not None:
        try:
            data = json.loads(text) if isinstance(value, str) else value
            jsonschema.validate(data, dict(column.json_schema))
        except json.JSONDecodeError as exc:
            return f"not JSON ({exc.msg})"
        except jsonschema.ValidationError as exc:
            return f"breaks its JSON schema ({exc.message[:120]})"
    if column.python:
        try:
            ast.parse(_code(text))
        except (SyntaxError, ValueError) as exc:
            return f"Python that does not parse ({getattr(exc, 'msg', exc)})"
    return None


def gate_cause(
    recipe: Recipe, column: Column, answer: str, finish_reason: str | None, prompt: str
) -> str | None:
    """The quality gate an LLM cell fails (``gates.py``'s causes), or None. A structured
    answer is checked against its schema (``unparsed``) and for being cut off; the gates on
    prose (repetition, echo, script) would read its JSON keys as words."""
    if not recipe.gates_on:
        return None
    schema: Mapping[str, Any] | None = column.schema()
    config = recipe.gates
    if schema is not None:
        config = replace(config, skip=config.skip | _PROSE_GATES)
    return gate(answer, finish_reason=finish_reason, prompt=prompt, json_schema=schema,
                config=config)  # fmt: skip


__all__ = ["gate_cause", "validate"]
