"""An ``llm_text`` column that sends a column's whole chat (``messages``) with the sample's
number as its seed (``seed_per_sample``): its checks, one sentence each, and its requests,
which for the built-in collection recipe are the requests ``dataset collect`` sent before
it was a recipe, key for key."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_foundry.lib.datasets.prompts import prompt_from_row
from model_foundry.lib.llm import Body, Request
from model_foundry.lib.llm.request import plan
from model_foundry.lib.recipes.collect import collect_recipe, prompt_rows
from model_foundry.lib.recipes.generate import llm_request
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.recipes.spec import RecipeError
from model_foundry_tests.slot_fixtures import shipped_slot_file

SOURCE = "recipes/chat/defs.yaml"
CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why?"}]


def _recipe(**answer: Any) -> dict[str, Any]:
    column = {"name": "answer", "type": "llm_text", "role": "worker", "messages": "chat",
              "seed_per_sample": True, "samples": 2, **answer}  # fmt: skip
    return {"name": "chat", "seed": {"file": "seed.jsonl"},
            "columns": [{"name": "chat", "type": "seed"}, column]}  # fmt: skip


def _sentence(raw: dict[str, Any]) -> str:
    with pytest.raises(RecipeError) as caught:
        parse_recipe(raw, SOURCE)
    return str(caught.value)


def test_a_messages_column_reads_its_chat_and_sends_it_as_it_is() -> None:
    recipe = parse_recipe(_recipe(), SOURCE)
    answer = recipe.column("answer")
    assert answer.reads == ("chat",)
    # The chat as a list or as its JSON text: the same request.
    for chat in (CHAT, json.dumps(CHAT)):
        first, second = (llm_request(recipe, answer, "r1", i, {"chat": chat}) for i in (0, 1))
        assert first.body.messages == CHAT and first.params["seed"] == 0
        assert second.params["seed"] == 1 and first.family == second.family
    assert answer.chat_turns({"chat": CHAT}) == [("system", "Be brief."), ("user", "Why?")]


def test_without_seed_per_sample_the_seed_is_hashed_from_the_row() -> None:
    recipe = parse_recipe(_recipe(seed_per_sample=False), SOURCE)
    answer = recipe.column("answer")
    seeds = {llm_request(recipe, answer, row, 0, {"chat": CHAT}).params["seed"]
             for row in ("r1", "r2")}  # fmt: skip
    assert len(seeds) == 2 and not seeds & {0, 1}


@pytest.mark.parametrize(
    ("answer", "sentence"),
    [
        ({"prompt": "{{ chat }}"}, "columns.answer.prompt: is not sent with messages (the column "
         "named there holds the whole chat)"),
        ({"system": "Be kind."}, "columns.answer.system: is not sent with messages (the column "
         "named there holds the whole chat)"),
        ({"text": "{{ chat }}"}, "columns.answer.messages: and text are both given: a column "
         "sends one of text, messages or a prompt"),
        ({"messages": "Chat!"}, "columns.answer.messages: must name a column of the recipe (a "
         "lower-case identifier)"),
        ({"messages": "chats"}, "columns.answer.messages: names column 'chats', which the "
         "recipe does not have"),
        ({"seed_per_sample": "yes"}, "columns.answer.seed_per_sample: must be true or false"),
        ({"params": {"seed": 7}}, "columns.answer.params.seed: is set by seed_per_sample "
         "(sample i is sent with seed i)"),
    ],
    ids=["prompt", "system", "text", "not-a-name", "unknown-column", "not-a-flag", "seed-twice"],
)  # fmt: skip
def test_a_bad_messages_column_is_one_sentence(answer: dict[str, Any], sentence: str) -> None:
    assert _sentence(_recipe(**answer)) == f"{SOURCE}: {sentence}"


def test_a_chat_that_is_not_turns_is_refused_naming_the_column() -> None:
    recipe = parse_recipe(_recipe(), SOURCE)
    with pytest.raises(ValueError, match="column answer: messages: column chat must hold"):
        llm_request(recipe, recipe.column("answer"), "r1", 0, {"chat": [{"role": "user"}]})


def test_the_collection_recipe_asks_what_dataset_collect_asked_key_for_key() -> None:
    slots = shipped_slot_file()
    prompts = [
        prompt_from_row({"prompt": "Name three rivers.", "system": "Be terse."}, "file:a.jsonl"),
        prompt_from_row({"id": "ja", "prompt": "富士山の高さは？"}, "file:a.jsonl"),
    ]
    params = {"max_tokens": 64}
    recipe = collect_recipe("ft", ["naughty", "kindergarten"], 2, params)
    for prompt, row in zip(prompts, prompt_rows(prompts), strict=True):
        for role in ("naughty", "kindergarten"):
            for i in range(2):
                new = llm_request(recipe, recipe.column(f"answer_{role}"), row.row_id, i,
                                  dict(row.values))  # fmt: skip
                # As lib/datasets/samples.py (DatasetSamples.request, commit fc87bd6) asked.
                before = Request("dataset:ft", role, Body(messages=prompt.messages),
                                 params={**params, "seed": i})  # fmt: skip
                assert plan(new, slots).key == plan(before, slots).key
