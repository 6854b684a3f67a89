"""A pairwise judge's two orders: the shared prefix first, the answers swapped, and the value
that both verdicts make (the winner, or a tie when the orders disagree)."""

from __future__ import annotations

import copy

from model_foundry.lib.gates.verdict import REASON_MAX, VERDICT_MAX_TOKENS
from model_foundry.lib.recipes.columns.judge import (
    POINTWISE_SYSTEM,
    SCORE_TOKENS,
    pairwise_messages,
    pairwise_value,
)
from model_foundry.lib.recipes.llm_cells import cell_requests
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry_tests.recipe_helpers import EVERY_COLUMN, PAIRWISE

VALUES = {"query": "how do I compact a file", "answer": "Run CHECKPOINT.",
          "cheap_answer": "Copy it."}  # fmt: skip


def _judge():
    recipe = parse_recipe(copy.deepcopy(PAIRWISE), "r/defs.yaml")
    return recipe, recipe.column("preference")


def _verdict(helpful: tuple[int, int], clear: tuple[int, int]) -> dict:
    return {"helpful_1": helpful[0], "helpful_2": helpful[1], "clear_1": clear[0],
            "clear_2": clear[1], "reason": "r"}  # fmt: skip


def test_both_orders_share_everything_before_the_answers() -> None:
    _, judge = _judge()
    ab = pairwise_messages(judge, VALUES, "ab")
    ba = pairwise_messages(judge, VALUES, "ba")
    assert ab[0] == ba[0] and "helpful (1-10): Does it answer the question?" in ab[0]["content"]
    one = "Answer 1:\nRun CHECKPOINT.\n\nAnswer 2:\nCopy it."
    two = "Answer 1:\nCopy it.\n\nAnswer 2:\nRun CHECKPOINT."
    assert ab[1]["content"] == f"Question: how do I compact a file\n\n{one}"
    assert ba[1]["content"] == f"Question: how do I compact a file\n\n{two}"


def test_the_two_requests_are_one_family_under_the_verdict_schema() -> None:
    recipe, judge = _judge()
    requests = cell_requests(recipe, judge, "row1", 0, VALUES)
    assert len(requests) == 2 and requests[0].family == requests[1].family is not None
    assert requests[0].role == "judge"
    assert requests[0].params == requests[1].params
    assert requests[0].params["json_schema"] == dict(judge.schema())
    assert requests[0].body.messages != requests[1].body.messages
    answer = recipe.column("answer")
    assert len(cell_requests(recipe, answer, "row1", 0, VALUES)) == 1


def test_the_winner_is_the_answer_both_orders_prefer_else_a_tie() -> None:
    _, judge = _judge()
    # ab reads answer first, ba reads cheap_answer first: both prefer answer.
    agreed = pairwise_value(judge, {"ab": _verdict((9, 4), (3, 3)),
                                    "ba": _verdict((5, 8), (3, 4))})  # fmt: skip
    assert agreed["winner"] == "answer" and agreed["agree"] is True
    assert agreed["helpful_a"] == 8.5 and agreed["helpful_b"] == 4.5
    assert agreed["clear_a"] == 3.5 and agreed["clear_b"] == 3.0
    assert agreed["verdict_ab"]["helpful_1"] == 9
    # Each order prefers the answer it read first: the orders disagree, a tie.
    biased = pairwise_value(judge, {"ab": _verdict((9, 4), (3, 3)),
                                    "ba": _verdict((9, 4), (3, 3))})  # fmt: skip
    assert biased["winner"] == "tie" and biased["agree"] is False
    both_tie = pairwise_value(judge, {"ab": _verdict((5, 5), (2, 2)),
                                      "ba": _verdict((5, 5), (2, 2))})  # fmt: skip
    assert both_tie["winner"] == "tie" and both_tie["agree"] is True


def test_a_judge_is_given_the_tokens_its_verdict_needs_unless_its_params_say() -> None:
    recipe, judge = _judge()
    # Two scores for each of two answers: two more than the dataset judge's verdict holds.
    [ab, _] = cell_requests(recipe, judge, "row1", 0, VALUES)
    assert ab.params["max_tokens"] == VERDICT_MAX_TOKENS + 2 * SCORE_TOKENS
    assert ab.params["json_schema"]["properties"]["reason"]["maxLength"] == REASON_MAX

    attributes = copy.deepcopy(PAIRWISE)
    attributes["columns"][-1]["params"] = {"max_tokens": 40}
    own = parse_recipe(attributes, "r/defs.yaml")
    [ab, _] = cell_requests(own, own.column("preference"), "row1", 0, VALUES)
    assert ab.params["max_tokens"] == 40
    answer = recipe.column("answer")
    assert cell_requests(recipe, answer, "row1", 0, VALUES)[0].params["max_tokens"] == 64


def test_a_pointwise_judge_reads_its_rubric_and_the_verdicts_shape() -> None:
    attributes = copy.deepcopy(EVERY_COLUMN)
    recipe = parse_recipe(attributes, "r/defs.yaml")
    values = {"question": "Why vacuum?", "answer": "To reclaim space.", "facts": {"topic": "db"}}
    [request] = cell_requests(recipe, recipe.column("score"), "row1", 0, values)
    system, user = request.body.messages
    assert system["role"] == "system" and system["content"].startswith(POINTWISE_SYSTEM)
    assert "- helpful (1-5): Does it help?" in system["content"]
    assert system["content"].endswith(
        'Reply with JSON only, on one line: {"helpful": <1-5>, "reason": "<one short sentence>"}'
    )
    assert user["content"] == "Q: Why vacuum?\nA: To reclaim space.\nTopic: db"

    # The column's own system replaces the built-in instructions, rendered over the row.
    attributes["columns"][6]["system"] = "Judge answers to: {{ question }}"
    own = parse_recipe(attributes, "r/defs.yaml")
    [request] = cell_requests(own, own.column("score"), "row1", 0, values)
    assert request.body.messages[0]["content"].startswith("Judge answers to: Why vacuum?\n\n")
