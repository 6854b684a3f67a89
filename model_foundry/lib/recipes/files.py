"""Finding a recipe by name: the ``defs.yaml`` files of ``DatasetRecipe`` components under the
defs folder (where ``dg scaffold defs`` writes them), then the shipped examples."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from model_foundry.lib import settings
from model_foundry.lib.errors import UserError
from model_foundry.lib.recipes.spec import RecipeError

COMPONENT_TYPE = "model_foundry.DatasetRecipe"


@dataclass(frozen=True)
class RecipeFile:
    path: Path
    name: str
    attributes: Any

    @property
    def folder(self) -> Path:
        return self.path.parent


def read_recipe_file(path: Path) -> list[RecipeFile]:
    """The recipes a defs.yaml declares (none when its components are of other types)."""
    try:
        docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise RecipeError(f"{path}: {at}does not parse as YAML ({problem})") from None
    out = []
    for doc in docs:
        if isinstance(doc, dict) and doc.get("type") == COMPONENT_TYPE:
            attributes = doc.get("attributes")
            name = attributes.get("name") if isinstance(attributes, dict) else None
            out.append(RecipeFile(path, str(name or path.parent.name), attributes))
    return out


def recipe_files(roots: tuple[Path, ...] | None = None) -> Iterator[RecipeFile]:
    for root in roots or (settings.recipes_dir(), settings.recipe_examples_dir()):
        for path in sorted(root.glob("**/defs.yaml")):
            yield from read_recipe_file(path)


def find_recipe(name: str, file: Path | None = None) -> RecipeFile:
    """The recipe ``name`` (of ``file`` when given); one sentence when there is none."""
    found = read_recipe_file(file) if file is not None else list(recipe_files())
    for recipe in found:
        if recipe.name == name:
            return recipe
    where = (
        str(file)
        if file is not None
        else (f"{settings.recipes_dir()} or {settings.recipe_examples_dir()}")
    )
    known = ", ".join(sorted({r.name for r in found})) or "none"
    raise UserError(f"no recipe named {name!r} in {where} (known: {known})")


__all__ = ["COMPONENT_TYPE", "RecipeFile", "find_recipe", "read_recipe_file", "recipe_files"]
