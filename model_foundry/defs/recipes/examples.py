"""The shipped example recipes (``examples/recipes/``), in the code location only when
MODEL_FOUNDRY_RECIPE_EXAMPLES is true, so they never crowd a user's lineage unasked."""

from __future__ import annotations

import dagster as dg

from model_foundry.defs.recipes.component import recipe_file_definitions
from model_foundry.lib import settings


@dg.definitions
def example_recipes() -> dg.Definitions:
    if not settings.recipe_examples():
        return dg.Definitions()
    paths = sorted(settings.recipe_examples_dir().glob("*/defs.yaml"))
    return dg.Definitions.merge(*(recipe_file_definitions(p) for p in paths))
