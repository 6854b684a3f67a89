"""An ``llm_judge`` column: the judge role scores a row on a rubric (``scores``), or compares
two of its columns (``compare``), asked in both orders.

Judges prefer whichever answer they read first, so a pairwise cell is two requests, the answers
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
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from model_foundry.lib.gates.verdict import REASON_MAX, VERDICT_MAX_TOKENS
from model_foundry.lib.llm import Body, Request
from model_foundry.lib.recipes.columns.base import ColumnAttributes
from model_foundry.lib.recipes.columns.llm import LlmAttributes, LlmColumn
from model_foundry.lib.recipes.problems import NAME, Problems
from model_foundry.lib.recipes.templates import render

JUDGE_ROLE = "judge"
# The two orders of a pairwise judge: the first column's answer read first, then the second's.
PAIR_ORDERS = ("ab", "ba")
# What each score beyond the dataset judge's two adds to a verdict: its name, its number, the
# JSON around them and some of the whitespace the grammar allows between fields.
SCORE_TOKENS = 16

PAIRWISE_SYSTEM = (
    "You compare two answers, Answer 1 and Answer 2, to the request below. Score each answer "
    "on every criterion of the rubric, judging only how well it serves the request. The order "
    "of the answers says nothing about their quality, and neither does their length."
)
POINTWISE_SYSTEM = (
    "You score the answer in the request below on every criterion of the rubric, judging only "
    "how well it serves what was asked."
)


class ScoreAttributes(BaseModel):
    name: str = Field(description="The score's name (a-z, 0-9, _), its sub-column.")
    description: str = Field(description="What the judge scores.")
    min: int = Field(default=1, description="The lowest score.")
    max: int = Field(default=5, description="The highest score.")


class JudgeAttributes(LlmAttributes):
    type: Literal["llm_judge"]
    scores: list[ScoreAttributes] = Field(description="The rubric: one score each.")
    compare: list[str] | None = Field(
        default=None, description="Two columns to compare, [a, b], asked in both orders."
    )


@dataclass(frozen=True)
class Score:
    """One score of a judge's rubric: an integer from ``low`` to ``high``."""

    name: str
    description: str
    low: int = 1
    high: int = 5


@dataclass(frozen=True, kw_only=True)
class JudgeColumn(LlmColumn):
    column_type: ClassVar[str] = "llm_judge"
    attributes: ClassVar[type[ColumnAttributes]] = JudgeAttributes
    default_role: ClassVar[str | None] = JUDGE_ROLE
    chat_rank: ClassVar[int] = 1

    scores: tuple[Score, ...] = ()
    # Pairwise: the two columns compared (YAML ``compare``), a's then b's.
    compare: tuple[str, ...] = ()

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        out = cls.parse_llm(raw, at, problems, sampled=False)
        with problems.field():
            out["scores"] = _scores(f"{at}.scores", raw.get("scores"), problems)
        if raw.get("compare") is not None:
            with problems.field():
                out["compare"] = _compare(f"{at}.compare", raw["compare"], problems)
        return out

    @property
    def is_pairwise(self) -> bool:
        return bool(self.compare)

    def reading(self) -> dict[str, frozenset[str]]:
        return {"compare": frozenset(self.compare), **super().reading()}

    def schema(self) -> Mapping[str, Any] | None:
        """A verdict's schema; a pairwise judge's is one order's verdict: each score for the
        answer read first (``<score>_1``) and second (``<score>_2``)."""
        suffixes = ("_1", "_2") if self.is_pairwise else ("",)
        props: dict[str, Any] = {
            f"{s.name}{suffix}": {"type": "integer", "minimum": s.low, "maximum": s.high}
            for s in self.scores
            for suffix in suffixes
        }
        props["reason"] = {"type": "string", "maxLength": REASON_MAX}
        return {
            "type": "object",
            "properties": props,
            "required": sorted(props),
            "additionalProperties": False,
        }

    def sub_columns(self) -> dict[str, str]:
        """A pairwise judge's value is not one verdict but both orders' (``pairwise_value``):
        the winner, whether the orders agree, and each score of each answer (their mean)."""
        if not self.is_pairwise:
            props = self.schema()["properties"]  # type: ignore[index]
            return {k: str(v.get("type", "string")) for k, v in props.items()}
        out = {"winner": "string", "agree": "boolean"}
        for s in self.scores:
            out |= {f"{s.name}_a": "number", f"{s.name}_b": "number"}
        return out

    def request_params(self, seed: int) -> dict[str, Any]:
        params = super().request_params(seed)
        if "max_tokens" not in self.params:
            params["max_tokens"] = verdict_tokens(self)
        return params

    def turns(self, values: Mapping[str, Any]) -> list[dict[str, str]]:
        # The judge reads its rubric and the verdict's shape; the schema only constrains.
        return [{"role": "system", "content": judge_system(self, values)},
                {"role": "user", "content": render(str(self.prompt), values)}]  # fmt: skip

    def requests(self, task: str, seed: int, values: Mapping[str, Any],
                 row_id: str) -> list[Request]:  # fmt: skip
        if not self.is_pairwise:
            return super().requests(task, seed, values, row_id)
        # Both orders share their prefix: one family, so one slot's prefix cache serves both.
        return [Request(task, self.role, Body(messages=pairwise_messages(self, values, order)),
                        params=self.request_params(seed), family=f"{task}:{row_id}")
                for order in PAIR_ORDERS]  # fmt: skip

    def value_of(self, answers: list[Any], *, held_back: bool) -> Any:
        if not self.is_pairwise:
            return answers[0]
        # Kept as the judge gave them when an order is held back, for its cause's sake.
        verdicts = dict(zip(PAIR_ORDERS, answers, strict=True))
        return verdicts if held_back else pairwise_value(self, verdicts)


def verdict_tokens(column: JudgeColumn) -> int:
    """A judge column's ``max_tokens`` when its params set none: the dataset judge's budget
    (``VERDICT_MAX_TOKENS``: two scores and a reason of at most ``REASON_MAX`` characters),
    and ``SCORE_TOKENS`` more for each further score. A slot's smaller default would cut the
    verdict short, and a verdict cut short never parses (a real model's were, in
    ``demo --real``)."""
    scores = len(column.scores) * (2 if column.is_pairwise else 1)
    return VERDICT_MAX_TOKENS + SCORE_TOKENS * max(0, scores - 2)


def _compare(at: str, raw: Any, problems: Problems) -> tuple[str, str]:
    """The two columns a pairwise judge compares; that both exist is checked with the graph."""
    if not isinstance(raw, list) or len(raw) != 2 or not all(isinstance(c, str) for c in raw):
        raise problems.error(at, "must name two columns, [a, b]")
    if raw[0] == raw[1]:
        raise problems.error(at, f"compares column {raw[0]!r} with itself")
    return raw[0], raw[1]


def _scores(at: str, raw: Any, problems: Problems) -> tuple[Score, ...]:
    if not isinstance(raw, list) or not raw:
        raise problems.error(at, "must be a non-empty list of {name, description, min, max}")
    scores = []
    for i, s in enumerate(raw):
        where = f"{at}[{i}]"
        if not isinstance(s, dict):
            raise problems.error(where, "must be a mapping with name and description")
        name = problems.text(f"{where}.name", s.get("name"))
        if not NAME.match(str(name)) or name == "reason":
            raise problems.error(
                f"{where}.name", "must be a lower-case identifier other than reason"
            )
        low = problems.integer(f"{where}.min", s.get("min", 1), 0)
        high = problems.integer(f"{where}.max", s.get("max", 5), low + 1)
        description = problems.text(f"{where}.description", s.get("description"))
        scores.append(Score(str(name), str(description), low, high))
    return tuple(scores)


def _shown(value: Any) -> str:
    """An answer as the judge reads it: text as it is, a structured answer as JSON."""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _reply(fields: list[tuple[str, str]]) -> str:
    """The verdict's shape, spelled out on one line: a model that sees it writes compact JSON,
    where the schema's grammar alone would let it spend its tokens on whitespace."""
    shown = ", ".join([*(f'"{name}": <{what}>' for name, what in fields),
                       '"reason": "<one short sentence>"'])  # fmt: skip
    return f"Reply with JSON only, on one line: {{{shown}}}"


def judge_system(column: JudgeColumn, values: Mapping[str, Any]) -> str:
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


def pairwise_messages(column: JudgeColumn, values: Mapping[str, Any], order: str) -> list[dict]:
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


def _total(verdict: Mapping[str, Any], column: JudgeColumn, place: str) -> int:
    return sum(int(verdict[f"{s.name}_{place}"]) for s in column.scores)


def _preferred(column: JudgeColumn, verdict: Mapping[str, Any], order: str) -> str:
    """The column one order's verdict prefers (by the sum of its scores), or ``tie``."""
    one, two = _total(verdict, column, "1"), _total(verdict, column, "2")
    if one == two:
        return "tie"
    first_wins = one > two
    a, b = column.compare
    return (a if first_wins else b) if order == "ab" else (b if first_wins else a)


def pairwise_value(column: JudgeColumn,
                   verdicts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:  # fmt: skip
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
    "JUDGE_ROLE",
    "PAIRWISE_SYSTEM",
    "PAIR_ORDERS",
    "POINTWISE_SYSTEM",
    "SCORE_TOKENS",
    "JudgeAttributes",
    "JudgeColumn",
    "Score",
    "judge_system",
    "pairwise_messages",
    "pairwise_value",
    "verdict_tokens",
]
