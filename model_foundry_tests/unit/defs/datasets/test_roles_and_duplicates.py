"""Dataset collection with two roles on one slot, duplicate prompts, and slots that reject all:
the unit tests."""

from __future__ import annotations

import pytest

from model_foundry.lib.datasets.prompts import PromptRecord, dedupe_prompts, duplicates_line
from model_foundry.lib.datasets.samples import dataset_task
from model_foundry.lib.llm import Request
from model_foundry.lib.llm.request import plan
from model_foundry.lib.recipes.collect import collect_recipe, prompt_rows
from model_foundry.lib.recipes.columns.llm import TextColumn
from model_foundry.lib.recipes.generate import llm_request
from model_foundry.lib.slots.body import Body
from model_foundry_tests.shared.defs.datasets.roles_and_duplicates import (
    prompt,
)
from model_foundry_tests.slot_fixtures import shipped_slot_file

pytestmark = pytest.mark.timeout(300)


# ---------------------------------------------------------------------------------------------
# Pure


def test_two_roles_on_one_slot_are_two_requests() -> None:
    sf = shipped_slot_file()
    messages = [{"role": "user", "content": "hi"}]
    summary = plan(Request("dataset:x", "summary", Body(messages=messages)), sf)
    kindergarten = plan(Request("dataset:x", "kindergarten", Body(messages=messages)), sf)
    # Same slot, model and parameters: only the role tells them apart.
    assert summary.model == kindergarten.model
    assert summary.output_params == kindergarten.output_params
    assert summary.key != kindergarten.key
    recipe = collect_recipe("x", ["summary", "kindergarten"], 2, {})
    planned = [
        plan(llm_request(recipe, column, row.row_id, i, dict(row.values)), sf)
        for row in prompt_rows([prompt("a", "one"), prompt("b", "two")])
        for column in recipe.columns
        if isinstance(column, TextColumn)
        for i in range(column.samples)
    ]
    assert len(planned) == 2 * 2 * 2
    assert len({r.key for r in planned}) == 8
    assert {r.request.task for r in planned} == {dataset_task("x")}


def test_a_role_named_twice_is_refused_in_one_sentence() -> None:
    with pytest.raises(ValueError, match="roles 'summary' and 'summary' would both be column"):
        collect_recipe("x", ["summary", "kindergarten", "summary"], 2, {})


def test_duplicate_prompts_are_dropped_and_named() -> None:
    prompts = [
        prompt("a", "same text"),
        prompt("b", "other"),
        prompt("c", "same text", source="file:b.jsonl"),
        prompt("chat:s1", "same text", source="inbox:chat_sessions"),
    ]
    kept, dropped = dedupe_prompts(prompts)
    assert [p.prompt_id for p in kept] == ["a", "b"]
    assert [(d.dropped.prompt_id, d.kept.prompt_id) for d in dropped] == [
        ("c", "a"),
        ("chat:s1", "a"),
    ]
    assert duplicates_line(dropped) == (
        "dropped 2 duplicate prompt(s), the same messages as an earlier prompt: "
        "c (file:b.jsonl) = a (file:a.jsonl), chat:s1 (inbox:chat_sessions) = a (file:a.jsonl)"
    )
    assert duplicates_line(dropped, shown=1).endswith("and 1 more")
    # A different system message makes a different prompt.
    sys_prompt = PromptRecord(
        "d", "f", [{"role": "system", "content": "x"}, {"role": "user", "content": "same text"}]
    )
    assert len(dedupe_prompts([*prompts, sys_prompt])[0]) == 3


# ---------------------------------------------------------------------------------------------
# Through the CLI
