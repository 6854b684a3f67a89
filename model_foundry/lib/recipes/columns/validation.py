"""A ``validation`` column: checks of another column's value (``target``); its value is
whether they pass, and a failing check holds the row back with the cause.

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
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import jsonschema
from pydantic import Field

from model_foundry.lib.recipes.columns.base import Column, ColumnAttributes
from model_foundry.lib.recipes.problems import Problems

# Character trigrams: a bigram of Latin letters is shared by too many unrelated English
# texts, a longer gram by too few short Japanese ones.
SIMILARITY_NGRAM = 3


class ValidationAttributes(ColumnAttributes):
    type: Literal["validation"]
    target: str = Field(description="The column checked.")
    json_schema: dict[str, Any] | None = Field(default=None, description="A JSON schema.")
    regex: str | None = Field(default=None, description="A regular expression it must match.")
    min_length: int | None = Field(default=None, description="The fewest characters.")
    max_length: int | None = Field(default=None, description="The most characters.")
    python: bool = Field(default=False, description="It must parse as Python (never run).")
    similar_to: str | None = Field(default=None, description="A column it must be like.")
    min_similarity: float | None = Field(
        default=None, description="How alike, from 0 to 1 (character trigrams' Jaccard)."
    )


@dataclass(frozen=True, kw_only=True)
class ValidationColumn(Column):
    column_type: ClassVar[str] = "validation"
    attributes: ClassVar[type[ColumnAttributes]] = ValidationAttributes

    target: str
    json_schema: Mapping[str, Any] | None = None
    regex: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    python: bool = False
    # The column the target is compared with (:func:`similarity`).
    similar_to: str | None = None
    min_similarity: float | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        out: dict[str, Any] = {}
        with problems.field():
            out["target"] = problems.text(f"{at}.target", raw.get("target"))
        if raw.get("json_schema") is not None:
            with problems.field():
                out["json_schema"] = problems.json_schema(
                    f"{at}.json_schema", raw["json_schema"], structured=False
                )
        if raw.get("regex") is not None:
            with problems.field():
                out["regex"] = _regex(f"{at}.regex", raw["regex"], problems)
        for key in ("min_length", "max_length"):
            if raw.get(key) is not None:
                with problems.field():
                    out[key] = problems.integer(f"{at}.{key}", raw[key], 0)
        with problems.field():
            out["python"] = problems.flag(f"{at}.python", raw.get("python", False))
        with problems.field():
            out |= _similarity(at, raw, out.get("target"), problems)
        checks = ("json_schema", "regex", "min_length", "max_length", "similar_to",
                  "min_similarity")  # fmt: skip
        if all(raw.get(k) is None for k in checks) and raw.get("python") is not True:
            problems.add(at, "checks nothing: give json_schema, regex, min_length, max_length, "
                         "similar_to or python: true")  # fmt: skip
        return out

    def reading(self) -> dict[str, frozenset[str]]:
        other = frozenset({self.similar_to}) if self.similar_to else frozenset()
        return {"target": frozenset({self.target}), "similar_to": other}

    def value_type(self) -> str:
        return "boolean"

    def compute(
        self, seed: Mapping[str, Any], values: Mapping[str, Any], *, random_seed: int, row_id: str
    ) -> tuple[Any, str | None]:
        cause = self.cause(values[self.target], values)
        return cause is None, cause

    def cause(self, value: Any, values: Mapping[str, Any] | None = None) -> str | None:
        """Why ``value`` (the target column's) fails its checks, in a few words; None when it
        passes. ``values`` is the row's (the column ``similar_to`` names is one)."""
        text = _text(value)
        if self.min_length is not None and len(text) < self.min_length:
            return f"shorter than {self.min_length} characters"
        if self.max_length is not None and len(text) > self.max_length:
            return f"longer than {self.max_length} characters"
        if self.regex is not None and not re.search(self.regex, text):
            return f"does not match {self.regex!r}"
        if self.json_schema is not None:
            try:
                data = json.loads(text) if isinstance(value, str) else value
                jsonschema.validate(data, dict(self.json_schema))
            except json.JSONDecodeError as exc:
                return f"not JSON ({exc.msg})"
            except jsonschema.ValidationError as exc:
                return f"breaks its JSON schema ({exc.message[:120]})"
        if self.python:
            try:
                ast.parse(_code(text))
            except (SyntaxError, ValueError) as exc:
                return f"Python that does not parse ({getattr(exc, 'msg', exc)})"
        if self.similar_to is not None and self.min_similarity is not None:
            score = similarity(text, _text((values or {}).get(self.similar_to, "")))
            if score < self.min_similarity:
                # The score goes after " (": the counts by cause group on the words before it.
                return f"less similar to {self.similar_to} than {self.min_similarity:g} " \
                       f"({score:.2f})"  # fmt: skip
        return None


def _regex(where: str, raw: Any, problems: Problems) -> str:
    pattern = str(problems.text(where, raw))
    try:
        re.compile(pattern)
    except re.error as exc:
        raise problems.error(where, f"is not a regular expression ({exc})") from None
    return pattern


def _similarity(at: str, raw: Mapping[str, Any], target: str | None,
                problems: Problems) -> dict[str, Any]:  # fmt: skip
    """``similar_to`` and ``min_similarity``, given together or not at all."""
    other, low = raw.get("similar_to"), raw.get("min_similarity")
    if other is None and low is None:
        return {}
    if other is None:
        raise problems.error(f"{at}.similar_to", "is needed with min_similarity (the column "
                             "the target is compared with)")  # fmt: skip
    if low is None:
        raise problems.error(f"{at}.min_similarity", "is needed with similar_to (a number "
                             "from 0 to 1)")  # fmt: skip
    name = str(problems.text(f"{at}.similar_to", other))
    if name == target:
        raise problems.error(f"{at}.similar_to", "must name a column other than the target")
    value = problems.number(f"{at}.min_similarity", low)
    if not 0 <= value <= 1:
        raise problems.error(f"{at}.min_similarity", "must be a number from 0 to 1")
    return {"similar_to": name, "min_similarity": value}


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


__all__ = ["SIMILARITY_NGRAM", "ValidationAttributes", "ValidationColumn", "similarity"]
