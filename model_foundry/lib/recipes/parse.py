"""Reading a recipe from a defs.yaml's ``attributes``: every problem, as a sentence naming
the file and the field (``recipe check`` lists them all), or the checked :class:`Recipe`
(the asset fails with the first problem)."""

from __future__ import annotations

from typing import Any

from model_foundry.lib.gates.config import GateConfigError, gate_settings
from model_foundry.lib.recipes.columns.base import Column
from model_foundry.lib.recipes.columns.registry import read_column
from model_foundry.lib.recipes.graph import check_graph
from model_foundry.lib.recipes.problems import NAME, Problems, RecipeError
from model_foundry.lib.recipes.spec import Recipe, Seed

_TOP = {"name", "description", "seed", "rows", "random_seed", "schedule", "columns", "gates",
        "export"}  # fmt: skip
_EXPORT = {"on_schedule"}


def parse_recipe(raw: Any, source: str, *, default_name: str | None = None) -> Recipe:
    """A checked :class:`Recipe` from a defs.yaml's ``attributes``; :class:`RecipeError`
    naming ``source`` and the field of its first problem otherwise."""
    recipe, problems = read_recipe(raw, source, default_name=default_name)
    if recipe is None:
        raise problems[0]
    return recipe


def read_recipe(
    raw: Any, source: str, *, default_name: str | None = None
) -> tuple[Recipe | None, list[RecipeError]]:
    """The recipe (None when it has a problem) and every problem, in the order of the file."""
    problems = Problems(source)
    if not isinstance(raw, dict):
        problems.add("attributes", "must be a mapping (name, seed, columns, ...)")
        return None, problems.found
    for unknown in sorted(set(raw) - _TOP):
        problems.add(f"attributes.{unknown}", "is not a field of a recipe")
    name = raw.get("name", default_name)
    if not isinstance(name, str) or not NAME.match(name):
        problems.add("attributes.name", "must be a lower-case identifier (a-z, 0-9, _)")
    columns = _columns(raw.get("columns"), problems)
    fields: dict[str, Any] = {}
    with problems.field():
        fields["seed"] = _seed(raw["seed"], problems) if raw.get("seed") is not None else None
    if raw.get("seed") is None and any(c.seed_fields() for c in columns):
        problems.add("seed", "is needed: the recipe has seed columns")
    with problems.field():
        fields["rows"] = _rows(raw, problems)
    gates_raw = raw.get("gates", True)
    with problems.field():
        try:
            fields["gates"] = gate_settings(
                f"{source}: gates", gates_raw if isinstance(gates_raw, dict) else {}
            )
        except GateConfigError as exc:
            raise RecipeError(str(exc)) from None
    with problems.field():
        fields["random_seed"] = problems.integer("random_seed", raw.get("random_seed", 0), 0)
    for key in ("schedule", "description"):
        with problems.field():
            fields[key] = problems.text(key, raw.get(key), required=False)
    with problems.field():
        fields["export_on_schedule"] = _export_on_schedule(raw.get("export"), problems)
    if problems.found:
        return None, problems.found
    recipe = Recipe(name=str(name), source=source, columns=tuple(columns),
                    gates_on=gates_raw is not False, raw=raw, **fields)  # fmt: skip
    return recipe, []


def _columns(raw: Any, problems: Problems) -> list[Column]:
    """The columns without a problem of their own; the graph checked over all of them."""
    if not isinstance(raw, list) or not raw:
        problems.add("columns", "must be a non-empty list of columns")
        return []
    names: list[str] = []
    columns: list[Column] = []
    for i, c in enumerate(raw):
        name, column = read_column(c, i, set(names), problems)
        if name is not None:
            names.append(name)
        if column is not None:
            columns.append(column)
    check_graph(columns, set(names), problems)
    return columns


def _rows(raw: dict[str, Any], problems: Problems) -> int | None:
    rows = raw.get("rows")
    if rows is not None:
        return problems.integer("rows", rows, 1)
    if raw.get("seed") is None:
        raise problems.error("rows", "is needed without a seed (how many rows to generate)")
    return None


def _seed(raw: Any, problems: Problems) -> Seed:
    if not isinstance(raw, dict) or len({"file", "sql"} & set(raw)) != 1:
        raise problems.error("seed", "must give exactly one of file or sql")
    unknown = sorted(set(raw) - {"file", "sql", "incremental"})
    if unknown:
        raise problems.error(f"seed.{unknown[0]}",
                             "is not a field of seed (file, sql, incremental)")  # fmt: skip
    if "incremental" in raw:
        if "sql" not in raw:
            raise problems.error("seed.incremental", "is for an sql seed only")
        column = raw["incremental"]
        if not isinstance(column, str) or not NAME.match(column):
            raise problems.error("seed.incremental", "must name a column of the query's rows, "
                                 "such as commit_seq")  # fmt: skip
        return Seed(sql=problems.text("seed.sql", raw["sql"]), incremental=column)
    if "file" in raw:
        path = str(problems.text("seed.file", raw["file"]))
        if not path.lower().endswith((".jsonl", ".csv", ".parquet")):
            raise problems.error("seed.file", "must be a .jsonl, .csv or .parquet file")
        return Seed(file=path)
    return Seed(sql=problems.text("seed.sql", raw["sql"]))


def _export_on_schedule(raw: Any, problems: Problems) -> bool:
    """``export: {on_schedule: true|false}``; unset: false."""
    if raw is None:
        return False
    if not isinstance(raw, dict):
        raise problems.error("export", "must be a mapping such as {on_schedule: true}")
    unknown = sorted(set(raw) - _EXPORT)
    if unknown:
        known = ", ".join(sorted(_EXPORT))
        raise problems.error(f"export.{unknown[0]}", f"is not a field of export ({known})")
    return problems.flag("export.on_schedule", raw.get("on_schedule", False))


__all__ = ["parse_recipe", "read_recipe"]
