"""A pairwise judge column: the judge role compares two columns of a row, asked in both orders.

Judges prefer whichever answer they read first (``lib/datasets/judge.py`` asks its
comparisons twice for the same reason), so a pairwise cell is two requests, the answers
swapped, and its value keeps both verdicts. The winner is the answer both orders prefer; when
they disagree the cell is a tie, and ``agree`` says so.

Each request puts what the two orders share first: the instructions and the rubric (the
system turn), then the rendered ``prompt`` (the question), and the answers last. That shared
part is byte-identical between the orders and the two requests name one ``family``, so the
dispatcher sends them to one slot and its prefix cache serves the second from the first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from model_foundry.lib.recipes.spec import Column
from model_foundry.lib.recipes.templates import render

PAIRWISE_SYSTEM = (
    "You compare two answers, Answer 1 and Answer 2, to the request below. Score each answer "
    "on every criterion of the rubric, judging only how well it serves the request. The order "
    "of the answers says nothing about their quality, and neither does their length."
)


def _shown(value: Any) -> str:
    """An answer as the judge reads it: text as it is, a structured answer as JSON."""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


POINTWISE_SYSTEM = (
    "You score the answer in the request below on every criterion of the rubric, judging only "
    "how well it serves what was asked."
)


def _reply(fields: list[tuple[str, str]]) -> str:
    """The verdict's shape, spelled out on one line: a model that sees it writes compact JSON,
    where the schema's grammar alone would let it spend its tokens on whitespace."""
    shown = ", ".join([*(f'"{name}": <{what}>' for name, what in fields),
                       '"reason": "<one short sentence>"'])  # fmt: skip
    return f"Reply with JSON only, on one line: {{{shown}}}"


def judge_system(column: Column, values: Mapping[str, Any]) -> str:
    """A judge column's system turn: its instructions (``system`` rendered over the row's
    ``values``, else the built-in ones), the rubric, and the verdict's shape. A pairwise judge
    scores both answers."""
    rubric = "\n".join(f"- {s.name} ({s.low}-{s.high}): {s.description}" for s in column.scores)
    if column.is_pairwise:
        fields = [(f"{s.name}_{i}", f"{s.low}-{s.high} for Answer {i}")
                  for s in column.scores for i in (1, 2)]  # fmt: skip
        intro = PAIRWISE_SYSTEM
    else:
        fields = [(s.name, f"{s.low}-{s.high}") for s in column.scores]
        intro = POINTWISE_SYSTEM
    if column.system:
        intro = render(column.system, values)
    return f"{intro}\n\nRubric:\n{rubric}\n\n{_reply(fields)}"


def pairwise_messages(column: Column, values: Mapping[str, Any], order: str) -> list[dict]:
    """The judge's conversation for one order (``ab``: the first compared column read first).
    Everything before ``Answer 1`` is the same in both orders."""
    a, b = (values[name] for name in column.compare)
    first, second = (a, b) if order == "ab" else (b, a)
    shared = render(str(column.prompt), values)
    answers = f"Answer 1:\n{_shown(first)}\n\nAnswer 2:\n{_shown(second)}"
    return [
        {"role": "system", "content": judge_system(column, values)},
        {"role": "user", "content": f"{shared}\n\n{answers}"},
    ]


def _total(verdict: Mapping[str, Any], column: Column, place: str) -> int:
    return sum(int(verdict[f"{s.name}_{place}"]) for s in column.scores)


def _preferred(column: Column, verdict: Mapping[str, Any], order: str) -> str:
    """The column one order's verdict prefers (by the sum of its scores), or ``tie``."""
    one, two = _total(verdict, column, "1"), _total(verdict, column, "2")
    if one == two:
        return "tie"
    first_wins = one > two
    a, b = column.compare
    return (a if first_wins else b) if order == "ab" else (b if first_wins else a)


def pairwise_value(column: Column, verdicts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The cell's value from both orders' verdicts (each already checked against
    ``column.schema()``): the winner (a compared column's name, or ``tie`` when the orders
    disagree or both see a tie), ``agree``, each score of each answer (the mean of the two
    orders) and both verdicts as the judge gave them."""
    ab, ba = verdicts["ab"], verdicts["ba"]
    picks = {order: _preferred(column, verdicts[order], order) for order in verdicts}
    agree = picks["ab"] == picks["ba"]
    value: dict[str, Any] = {"winner": picks["ab"] if agree else "tie", "agree": agree}
    for s in column.scores:
        value[f"{s.name}_a"] = (ab[f"{s.name}_1"] + ba[f"{s.name}_2"]) / 2
        value[f"{s.name}_b"] = (ab[f"{s.name}_2"] + ba[f"{s.name}_1"]) / 2
    value["verdict_ab"] = dict(ab)
    value["verdict_ba"] = dict(ba)
    return value


__all__ = [
    "PAIRWISE_SYSTEM",
    "POINTWISE_SYSTEM",
    "judge_system",
    "pairwise_messages",
    "pairwise_value",
]
