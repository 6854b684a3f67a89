"""Validation columns and the quality gates: why a cell is held back, or None.

Model-written Python is parsed (``ast.parse``), never run. A failing check keeps its cell in
DuckDB with the cause (``status = 'rejected'``), so the row stays queryable and is left out
of what is exported.

``similar_to`` compares the target with another column by :func:`similarity`: the Jaccard
index of the two texts' sets of character trigrams (after NFKC, case folding and collapsing
white space). Characters, not words, because Japanese is written without spaces between
words; a set of trigrams, because a faithful back-translation may reorder clauses, which a
sequence measure (``difflib``'s ratio) punishes and a bag of local pieces does not. It is
linear in the texts' lengths and the same on every machine (no model, no tokenizer).
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import jsonschema

from model_foundry.lib.gates.answers import gate
from model_foundry.lib.recipes.spec import Column, Recipe

_PROSE_GATES = frozenset({"empty", "wrong_script", "repetition", "echo"})
# Character trigrams: a bigram of Latin letters is shared by too many unrelated English
# texts, a longer gram by too few short Japanese ones.
SIMILARITY_NGRAM = 3


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _code(text: str) -> str:
    """The code of an answer: inside its first fenced block when it has one."""
    fenced = re.search(r"```[\w+-]*\n(.*?)```", text, re.S)
    return fenced.group(1) if fenced else text


def _grams(text: str) -> set[str]:
    plain = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    n = SIMILARITY_NGRAM
    if len(plain) < n:
        return {plain} if plain else set()
    return {plain[i : i + n] for i in range(len(plain) - n + 1)}


def similarity(a: str, b: str) -> float:
    """How alike two texts are, from 0 (no character trigram shared) to 1 (the same set of
    trigrams): see the module doc. Two empty texts are alike."""
    left, right = _grams(a), _grams(b)
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def validate(column: Column, value: Any, values: Mapping[str, Any] | None = None) -> str | None:
    """Why ``value`` (the target column's) fails ``column``'s checks, in a few words; None
    when it passes. ``values`` is the row's (the column ``similar_to`` names is one)."""
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
    if column.similar_to is not None and column.min_similarity is not None:
        score = similarity(text, _text((values or {}).get(column.similar_to, "")))
        if score < column.min_similarity:
            # The score goes after " (": the counts by cause group on the words before it.
            return (
                f"less similar to {column.similar_to} than {column.min_similarity:g} ({score:.2f})"
            )
    return None


def gate_cause(
    recipe: Recipe,
    column: Column,
    answer: str,
    finish_reason: str | None,
    prompt: str,
    target_lang: str | None = None,
) -> str | None:
    """The quality gate an LLM cell fails (``lib/gates``' causes), or None. A structured
    answer is checked against its schema (``unparsed``) and for being cut off; the gates on
    prose (repetition, echo, script) would read its JSON keys as words. ``target_lang``
    (``ja``/``en``) is a translation's, for the script gate."""
    if not recipe.gates_on:
        return None
    schema: Mapping[str, Any] | None = column.schema()
    config = recipe.gates
    if schema is not None:
        config = replace(config, skip=config.skip | _PROSE_GATES)
    return gate(answer, finish_reason=finish_reason, prompt=prompt, json_schema=schema,
                target_lang=target_lang, config=config)  # fmt: skip


__all__ = ["SIMILARITY_NGRAM", "gate_cause", "similarity", "validate"]
