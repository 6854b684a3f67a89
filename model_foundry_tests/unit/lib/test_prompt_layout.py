"""Prompts laid out for the servers' prefix caches: what a family of requests shares comes
first, byte for byte, and only then what varies.

A server reuses the cached prefix of an earlier request only up to the first byte that
differs. Two map parts of one session share their instructions; two judge comparisons of one
prompt share the instructions and the whole conversation. Checked on the requests as sent
(``build_request``), on a slot that takes a system message and on one that folds it into the
first user turn (Gemma's templates), since the fold moves the instructions into the user turn.
"""

from __future__ import annotations

import pytest

from model_foundry.lib.recipes.collect_judge import (
    CONVERSATION,
    VERDICT,
    conversation,
    judge_recipe,
)
from model_foundry.lib.recipes.columns.judge import PAIRWISE_SYSTEM
from model_foundry.lib.recipes.llm_cells import cell_requests
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.request import build_request
from model_foundry.lib.summaries.chunks import Chunk, Piece
from model_foundry.lib.summaries.prompts import part_messages
from model_foundry_tests.slot_fixtures import shipped_slot_file

# naughty takes a system message; kindergarten folds it into the first user turn.
SLOTS = ("naughty", "kindergarten")


def sent_text(slot: str, messages: list[dict[str, str]]) -> str:
    """The turns of the request as sent, in order: what a chat template lays out."""
    request = build_request(shipped_slot_file().slots[slot], Body(messages=messages))
    return "".join(f"<{m['role']}>{m['content']}" for m in request["messages"])


def shared_prefix(a: str, b: str) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return a[:n]


@pytest.mark.parametrize("slot", SLOTS)
def test_map_parts_of_one_session_share_their_instructions_first(slot: str) -> None:
    lines = [Piece(i, f"[user] step {i}: change line {i} of app.py") for i in range(1, 9)]
    first = part_messages("sess-1", Chunk(tuple(lines[:4])), level=1, language="en")
    second = part_messages("sess-1", Chunk(tuple(lines[4:])), level=1, language="en")
    a, b = sent_text(slot, first), sent_text(slot, second)
    shared = shared_prefix(a, b)
    # Everything up to the parts' own numbers is common: the instructions, then the session.
    assert shared.endswith("Session sess-1, messages "), shared[-60:]
    assert first[0]["content"] in shared
    assert a[len(shared) :].startswith("1-4") and b[len(shared) :].startswith("5-8")


@pytest.mark.parametrize("slot", SLOTS)
def test_judge_comparisons_of_one_prompt_share_everything_before_the_answers(slot: str) -> None:
    prompt = [
        {"role": "system", "content": "You are a careful Python reviewer."},
        {"role": "user", "content": "Why does my loop over a dict raise RuntimeError?"},
    ]
    answers = [f"Answer number {i}: you change the dict while iterating." for i in range(3)]
    recipe = judge_recipe("layout")
    column = recipe.column(VERDICT)

    def asked(row_id: str, a: str, b: str, order: int) -> str:
        values = {CONVERSATION: conversation(prompt), "answer_a": a, "answer_b": b}
        request = cell_requests(recipe, column, row_id, 0, values)[order]  # type: ignore[arg-type]
        return sent_text(slot, request.body.messages)

    # Two comparisons of one prompt, in either order: the same instructions and conversation.
    a = asked("r1", answers[0], answers[1], 0)
    b = asked("r2", answers[1], answers[2], 1)
    shared = shared_prefix(a, b)
    assert PAIRWISE_SYSTEM in shared
    for message in prompt:
        assert message["content"] in shared
    # The answers are the only part that differs, and they come last.
    assert shared.endswith("Answer 1:\nAnswer number "), shared[-60:]
    assert "Answer 2:" not in shared
