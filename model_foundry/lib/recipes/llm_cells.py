"""An LLM cell: what it asks (its column's requests, each with the cell's own ``seed``), what
its key takes of them, and its value from the answers, held back by the quality gates.

The quality gates read an answer as prose: a structured answer is checked against its schema
(``unparsed``) and for being cut off, not for repetition, echo or script, which would read its
JSON keys as words.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from model_foundry.lib.llm import Request
from model_foundry.lib.llm.request import Planned
from model_foundry.lib.recipes.columns.llm import LlmColumn
from model_foundry.lib.recipes.spec import Recipe

_PROSE_GATES = frozenset({"empty", "wrong_script", "repetition", "echo"})


def recipe_task(recipe: str, column: str) -> str:
    return f"recipe:{recipe}/{column}"


def cell_task(recipe: Recipe, column: LlmColumn) -> str:
    """The task a column's requests are sent under (part of their keys): the recipe's own
    ``task`` where it gives one (a built-in recipe keeps its requests' old keys), else
    ``recipe:<recipe>/<column>``."""
    return recipe.task or recipe_task(recipe.name, column.name)


def request_seed(recipe: Recipe, row_id: str, column: LlmColumn, sample: int) -> int:
    """The ``seed`` parameter of a cell's request: the column's own for the sample
    (``seed_per_sample``), else a hash, so the row and the sample make their own request
    (and key) even where two rows render the same prompt."""
    own = column.sample_seed(sample)
    if own is not None:
        return own
    given = column.params.get("seed", recipe.random_seed)
    digest = hashlib.sha256(f"{given}\x00{row_id}\x00{column.name}\x00{sample}".encode())
    return int.from_bytes(digest.digest()[:4], "big") & 0x7FFFFFFF


def cell_requests(recipe: Recipe, column: LlmColumn, row_id: str, sample: int,
                  values: Mapping[str, Any]) -> list[Request]:  # fmt: skip
    """What one LLM cell asks: one request, or a pairwise judge's two orders."""
    seed = request_seed(recipe, row_id, column, sample)
    return column.requests(cell_task(recipe, column), seed, values, row_id)


def requests_key(planned: Sequence[Planned]) -> Any:
    """What a cell's key takes of its requests: the one request key (as cells stored before
    pairwise judges have it), or the list of both orders' keys."""
    return planned[0].key if len(planned) == 1 else [p.key for p in planned]


def tokens(counts: Iterable[int | None]) -> int | None:
    """A cell's tokens over its requests; None when no server reported them."""
    given = [n for n in counts if n is not None]
    return sum(given) if given else None


def gate_cause(recipe: Recipe, column: LlmColumn, answer: str, finish_reason: str | None,
               prompt: str, target_lang: str | None = None) -> str | None:  # fmt: skip
    """The quality gate an LLM cell fails (``gates.py``'s causes), or None. ``target_lang``
    (``ja``/``en``) is a translation's, for the script gate."""
    if not recipe.gates_on:
        return None
    # The gates' expressions compile once the first answer is in, not before the first request.
    from model_foundry.lib.gates.answers import gate

    schema: Mapping[str, Any] | None = column.schema()
    config = recipe.gates
    if schema is not None:
        config = replace(config, skip=config.skip | _PROSE_GATES)
    return gate(answer, finish_reason=finish_reason, prompt=prompt, json_schema=schema,
                target_lang=target_lang, config=config)  # fmt: skip


def answer_value(recipe: Recipe, column: LlmColumn, ps: Sequence[Planned],
                 completions: Sequence[Any]) -> tuple[Any, str | None]:  # fmt: skip
    """An LLM cell's value from its requests' answers (a pairwise judge's two verdicts made
    one), and the first gate or parse failure that holds it back."""
    from model_foundry.lib.gates.answers import body_text, target_language

    answers: list[Any] = []
    cause: str | None = None
    for p, completion in zip(ps, completions, strict=True):
        text = completion.content
        prompt = body_text(p.request.body.as_dict())
        # A text column's answer is a translation when it names a target: the script gate too.
        target = target_language([], p.request.params) if column.sends_bare_text else None
        cause = cause or gate_cause(recipe, column, text, completion.finish_reason, prompt,
                                    target_lang=target)  # fmt: skip
        value: Any = text.strip()
        if column.schema() is not None:
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                cause = cause or "unparsed"
        answers.append(value)
    return column.value_of(answers, held_back=cause is not None), cause


__all__ = [
    "answer_value",
    "cell_requests",
    "cell_task",
    "gate_cause",
    "recipe_task",
    "request_seed",
    "requests_key",
    "tokens",
]
