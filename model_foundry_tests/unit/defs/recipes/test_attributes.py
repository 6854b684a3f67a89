"""DatasetRecipe's attributes are typed, so ``dg`` shows each field and each column type's
fields; every shipped example and the scaffolded starter are of those types, and a recipe
that is not still loads, to fail on its asset in its sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from pydantic import TypeAdapter, ValidationError

from model_foundry.defs.recipes.component import STARTER, DatasetRecipe
from model_foundry.lib import settings
from model_foundry.lib.recipes.columns.registry import COLUMN_CLASSES, COLUMN_TYPES


def _schema() -> dict[str, Any]:
    # What dg reads of a component type (its snapshot's component schema).
    model = DatasetRecipe.get_model_cls()
    assert model is not None
    return model.model_json_schema()


def test_the_schema_types_each_attribute_and_each_column_type() -> None:
    schema = _schema()
    props = schema["properties"]
    assert {"integer"} <= {t.get("type") for t in props["rows"]["anyOf"]}
    assert schema["additionalProperties"] is False
    items = next(t for t in props["columns"]["anyOf"] if t.get("type") == "array")["items"]
    assert sorted(items["discriminator"]["mapping"]) == sorted(COLUMN_TYPES)
    defs = schema["$defs"]
    judge = defs[items["discriminator"]["mapping"]["llm_judge"].rsplit("/", 1)[1]]
    assert {"scores", "compare", "prompt", "role"} <= set(judge["properties"])
    assert "samples" not in judge["properties"]
    # A column type's fields are the ones its class reads from the YAML.
    for kind, cls in COLUMN_CLASSES.items():
        shown = defs[items["discriminator"]["mapping"][kind].rsplit("/", 1)[1]]
        assert set(shown["properties"]) - {"name", "type", "description"} == cls.yaml_fields()


def _examples() -> list[dict[str, Any]]:
    found = sorted(settings.recipe_examples_dir().glob("*/defs.yaml"))
    docs = [d for path in found for d in yaml.safe_load_all(path.read_text(encoding="utf-8"))]
    assert len(docs) == 3
    return [d["attributes"] for d in docs]


@pytest.mark.parametrize("attributes", [*_examples(), STARTER])
def test_the_examples_and_the_starter_are_of_the_types_shown(attributes: dict[str, Any]) -> None:
    TypeAdapter(DatasetRecipe.model()).validate_python(attributes)


def test_a_recipe_of_other_types_still_loads_and_fails_on_its_asset() -> None:
    given = {"name": "odd", "rows": "5", "columns": [{"name": "a", "type": "x", "colour": 1}]}
    with pytest.raises(ValidationError):
        TypeAdapter(DatasetRecipe.model()).validate_python(given)
    model = DatasetRecipe.get_model_cls()
    assert model is not None
    attributes = TypeAdapter(model).validate_python(given)
    context = dg.ComponentTree.for_test().load_context
    defs = DatasetRecipe.load(attributes, context).build_defs(context)
    asset = defs.get_assets_def("recipe_odd")
    source = Path(context.path) / "defs.yaml"
    # The recipe's own check reads the YAML as written: the unknown type is its sentence.
    assert asset.metadata_by_key[asset.key]["recipe_error"] == (
        f"{source}: columns.a.type: unknown column type 'x' (known: seed, sampler, expression, "
        "llm_text, llm_structured, llm_judge, validation)"
    )
    # And "5" stays the text it was, which a recipe refuses (the types would make it 5).
    fixed = {**given, "columns": [{"name": "a", "type": "sampler", "sampler": "choice",
                                   "values": [1]}]}  # fmt: skip
    attributes = TypeAdapter(model).validate_python(fixed)
    defs = DatasetRecipe.load(attributes, context).build_defs(context)
    asset = defs.get_assets_def("recipe_odd")
    assert asset.metadata_by_key[asset.key]["recipe_error"] == (
        f"{source}: rows: must be an integer >= 1"
    )
