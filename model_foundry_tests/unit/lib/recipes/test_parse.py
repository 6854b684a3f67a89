"""A recipe with several problems: every one is kept, in the order of the file, each naming
the file and the field; the asset's one sentence is the first of them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from model_foundry.lib.recipes.parse import parse_recipe, read_recipe
from model_foundry.lib.recipes.spec import RecipeError
from model_foundry_tests.recipe_helpers import EVERY_COLUMN

SOURCE = "recipes/q/defs.yaml"


def _many_problems() -> dict[str, Any]:
    raw = copy.deepcopy(EVERY_COLUMN)
    raw["colour"] = "blue"
    columns = {c["name"]: c for c in raw["columns"]}
    columns["tone"]["weights"] = [1]
    columns["answer"].update(samples=0, temperature=0.2, prompt="{{ qestion }}")
    columns["facts"]["output_format"] = {"type": "array"}
    columns["score"]["scores"] = []
    columns["long_enough"]["type"] = "check"
    raw["random_seed"] = -1
    return raw


def test_every_problem_is_listed_in_the_files_order() -> None:
    recipe, problems = read_recipe(_many_problems(), SOURCE)
    assert recipe is None
    assert [str(p) for p in problems] == [
        f"{SOURCE}: attributes.colour: is not a field of a recipe",
        f"{SOURCE}: columns.tone.weights: must be a list as long as values",
        f"{SOURCE}: columns.answer.temperature: is not a field of a llm_text column",
        f"{SOURCE}: columns.answer.samples: must be an integer >= 1",
        f"{SOURCE}: columns.facts.output_format: must be an object schema with properties "
        "(its sub-columns)",
        f"{SOURCE}: columns.score.scores: must be a non-empty list of {{name, description, "
        "min, max}",
        f"{SOURCE}: columns.long_enough.type: unknown column type 'check' (known: seed, "
        "sampler, expression, llm_text, llm_structured, llm_judge, validation)",
        f"{SOURCE}: random_seed: must be an integer >= 0",
    ]
    with pytest.raises(RecipeError) as caught:
        parse_recipe(_many_problems(), SOURCE)
    assert str(caught.value) == str(problems[0])


def test_a_column_with_problems_is_still_a_name_others_may_read() -> None:
    """The answer's own problem is reported once: the columns reading it name a column the
    recipe has, and a template naming one it lacks is reported from a column that is fine."""
    raw = copy.deepcopy(EVERY_COLUMN)
    columns = {c["name"]: c for c in raw["columns"]}
    columns["answer"]["samples"] = "two"
    columns["question"]["expr"] = "{{ tone }} {{ qurey }}"
    _, problems = read_recipe(raw, SOURCE)
    assert [str(p) for p in problems] == [
        f"{SOURCE}: columns.answer.samples: must be an integer >= 1",
        f"{SOURCE}: columns.question.expr: names column 'qurey', which the recipe does not have",
    ]


def test_a_good_recipe_has_no_problem() -> None:
    recipe, problems = read_recipe(copy.deepcopy(EVERY_COLUMN), SOURCE)
    assert problems == [] and recipe is not None and len(recipe.columns) == 9
