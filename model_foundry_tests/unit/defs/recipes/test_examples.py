"""The shipped example recipes join the code location only when enabled, and a bad recipe is
an asset that fails in its sentence, never a definitions error."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from model_foundry.defs.recipes.component import recipe_definitions
from model_foundry.defs.recipes.examples import example_recipes
from model_foundry.lib import settings
from model_foundry.lib.recipes.files import recipe_files
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.recipes.roles import check_roles
from model_foundry_tests.slot_fixtures import shipped_slot_file

EXAMPLES = ("coding_tasks", "search_questions", "summary_round_trip")


def _keys(defs: dg.Definitions) -> set[str]:
    return {k.to_user_string() for a in defs.assets or () for k in a.keys}  # type: ignore[union-attr]


def test_examples_load_only_when_enabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODEL_FOUNDRY_RECIPE_EXAMPLES", raising=False)
    assert _keys(example_recipes()) == set()
    monkeypatch.setenv("MODEL_FOUNDRY_RECIPE_EXAMPLES", "true")
    enabled = example_recipes()
    assert _keys(enabled) == {f"recipe_{n}{s}" for n in EXAMPLES for s in ("", "_export")}
    assert sorted(j.name for j in enabled.jobs or ()) == [f"recipe_{n}_job" for n in EXAMPLES]  # type: ignore[union-attr]
    monkeypatch.setenv("MODEL_FOUNDRY_RECIPE_EXAMPLES", "maybe")
    with pytest.raises(ValueError, match="MODEL_FOUNDRY_RECIPE_EXAMPLES='maybe'"):
        settings.recipe_examples()


def test_each_shipped_example_parses_and_asks_roles_the_shipped_slot_file_has() -> None:
    found = list(recipe_files((settings.recipe_examples_dir(),)))
    assert sorted(r.name for r in found) == list(EXAMPLES)
    for example in found:
        recipe = parse_recipe(example.attributes, str(example.path), default_name=example.name)
        # What `model-foundry recipe check NAME` checks, on the slot file a checkout ships.
        check_roles(recipe, shipped_slot_file(), None)
        assert recipe.description and recipe.seed is not None
        if recipe.seed.file is not None:
            assert (example.folder / recipe.seed.file).is_file()


def test_a_bad_recipe_is_an_asset_that_fails_in_its_sentence() -> None:
    source = Path("recipes/bad/defs.yaml")
    defs = recipe_definitions({"name": "bad", "rows": 2, "columns": [{"name": "a", "type": "x"}]},
                              source)  # fmt: skip
    assert _keys(defs) == {"recipe_bad"}
    sentence = (
        f"{source}: columns.a.type: unknown column type 'x' (known: seed, sampler, expression, "
        "llm_text, llm_structured, llm_judge, validation)"
    )
    result = dg.materialize(list(defs.assets or ()), raise_on_error=False)  # type: ignore[arg-type]
    failure = next(e for e in result.all_events if e.is_step_failure)
    assert failure.step_failure_data.user_failure_data.description == sentence


def test_a_schedule_comes_from_the_recipe_and_a_bad_cron_is_its_sentence() -> None:
    column = {"name": "a", "type": "sampler", "sampler": "choice", "values": [1]}
    raw = {"name": "nightly", "rows": 1, "schedule": "0 4 * * *", "columns": [column]}
    defs = recipe_definitions(raw, Path("r/defs.yaml"))
    schedule = next(iter(defs.schedules or ()))
    assert schedule.name == "recipe_nightly_schedule"  # type: ignore[union-attr]
    assert schedule.cron_schedule == "0 4 * * *"  # type: ignore[union-attr]
    broken = recipe_definitions({**raw, "schedule": "at four"}, Path("r/defs.yaml"))
    asset = next(iter(broken.assets or ()))
    assert asset.metadata_by_key[dg.AssetKey("recipe_nightly")]["recipe_error"] == (  # type: ignore[union-attr]
        "r/defs.yaml: schedule: 'at four' is not a cron string"
    )
