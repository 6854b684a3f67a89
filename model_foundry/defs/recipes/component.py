"""``DatasetRecipe``: a dataset declared in a ``defs.yaml``, as a Dagster component.

``dg scaffold defs model_foundry.DatasetRecipe recipes/<name>`` writes a starter recipe under
this folder; each recipe becomes the asset ``recipe_<name>`` (its generated rows, in the
``datasets`` group), the job ``recipe_<name>_job`` and, with ``schedule``, the schedule
``recipe_<name>_schedule``, and the asset ``recipe_<name>_export`` (its rows exported with
the datasets' hygiene, ``lib/recipes/export.py``; outside the job unless the recipe says
``export: {on_schedule: true}``, and then told to write no version when no cell is new).
The attributes are typed (each column type's fields too), so ``dg`` shows them and ``dg check
yaml`` flags what is not of their type; but a recipe is refused by its own check
(``lib/recipes/parse.py``), not by Dagster's validation, so that a bad recipe never takes the
code location down: it still becomes its asset, which fails with the one sentence naming the
file and the field (and the sentence is logged while the definitions load, which ``dg check
defs`` shows).
"""

# No ``from __future__ import annotations``: Dagster reads the nested assets' annotations.
import functools
import json
import logging
import re
from pathlib import Path
from typing import Annotated, Any, Self

import dagster as dg
from dagster._core.definitions.unresolved_asset_job_definition import (
    UnresolvedAssetJobDefinition,
)
from dagster._utils.schedules import is_valid_cron_string
from pydantic import (
    BaseModel,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from model_foundry.defs.export_checks import export_checks
from model_foundry.defs.metadata import (
    PREVIEW_ROWS,
    dagster_metadata,
    export_view_metadata,
    preview_table,
)
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib import settings
from model_foundry.lib.recipes.columns.registry import COLUMN_TYPES, column_attributes
from model_foundry.lib.recipes.files import read_recipe_file
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.recipes.spec import Recipe, RecipeError

log = logging.getLogger(__name__)


def _field(description: str, examples: list[Any] | None = None, typed: Any = None) -> Any:
    # Passed through as written: the recipe's Jinja templates are its own, not Dagster's.
    if typed is None:
        return dg.Resolver.passthrough(description=description, examples=examples)
    # A type Dagster cannot derive a model from (a union of the column types), given as is.
    return dg.Resolver(lambda _context, value: value, model_field_type=typed,
                       inject_before_resolve=False, description=description,
                       examples=examples)  # fmt: skip


def recipe_key(name: str) -> dg.AssetKey:
    return dg.AssetKey(f"recipe_{name}")


def export_key(name: str) -> dg.AssetKey:
    return dg.AssetKey(f"recipe_{name}_export")


class RecipeExportConfig(dg.Config):
    version: str | None = Field(
        default=None, description="Version; unset: the UTC date, suffixed when it is finished."
    )
    license: str | None = Field(default=None, description="The card's license; unset: unknown.")
    test_share: float = Field(default=0.05, description="Share of new seed rows sent to test.")
    output_dir: str | None = Field(default=None, description="Export root; unset: datasets/.")
    skip_unchanged: bool = Field(
        default=False,
        description=(
            "Write no version when a finished one holds the same rows, recipe, license and "
            "test share (the recipe's job sets it with export: {on_schedule: true})."
        ),
    )


def _export(context: dg.AssetExecutionContext, recipe: Recipe, config: RecipeExportConfig,
            duckdb: FoundryDuckDB) -> dg.MaterializeResult:  # fmt: skip
    from model_foundry.lib.errors import UserError
    from model_foundry.lib.exports.hygiene import export_hygiene
    from model_foundry.lib.exports.published import empty_split_warning, figures_line
    from model_foundry.lib.recipes.export import (
        export_metadata,
        export_recipe,
        nothing_kept_warning,
        recipe_export_request,
        unchanged_export,
    )

    try:
        request = recipe_export_request(
            version=config.version, license=config.license, test_share=config.test_share,
            output_dir=config.output_dir, run=f"dagster run {context.run.run_id}",
        )  # fmt: skip
        same = unchanged_export(duckdb.database, recipe, request) if config.skip_unchanged else None
        if same is not None:
            # A scheduled tick with no new cell: the version written before holds these rows.
            context.log.info(f"recipe {recipe.name}: no new cells since version {same}; "
                             "no version written")  # fmt: skip
            return dg.MaterializeResult(metadata=dagster_metadata(
                {"unchanged": True, "version": same,
                 "export_path": str(request.out_root / recipe.name / same)}))  # fmt: skip
        hygiene = export_hygiene(Path(duckdb.database), recipe.name, config.test_share)
        outcome = export_recipe(duckdb.database, recipe, request, hygiene)
    except (UserError, ValueError) as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    context.log.info(figures_line(outcome))
    meta = export_metadata(outcome)
    warning = empty_split_warning(outcome, config.test_share)
    if warning:
        context.log.warning(warning)
        meta["split_warning"] = warning
    nothing = nothing_kept_warning(outcome)
    if nothing:
        context.log.warning(nothing)
    # Ids, counts and the folder, and a preview of a few rows whose text (seed rows, answers
    # may hold the lab's tokens) is scrubbed again before it reaches Dagster's run storage.
    meta.update(export_view_metadata(outcome.path))
    return dg.MaterializeResult(metadata=dagster_metadata(meta))


def _safe_name(raw: Any, folder: Path) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    if isinstance(name, str) and re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        return name
    return re.sub(r"[^a-z0-9_]", "_", folder.name.lower()) or "unnamed"


def _run(context: dg.AssetExecutionContext, recipe: Recipe, base_dir: Path,
         duckdb: FoundryDuckDB, slots: SlotsResource) -> dg.MaterializeResult:  # fmt: skip
    from model_foundry.lib.recipes.generate import run_recipe

    try:
        outcome = run_recipe(
            recipe, duckdb.database, slots, run_id=context.run.run_id, log=context.log,
            base_dir=base_dir,
        )  # fmt: skip
    except RecipeError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    meta = outcome.metadata()
    unanswered = outcome.unanswered_warning()
    if unanswered:
        context.log.warning(unanswered)
    if outcome.view:
        meta.update(_view_metadata(duckdb, outcome.view, outcome.version))
    return dg.MaterializeResult(
        metadata=dagster_metadata({**meta, "dagster/row_count": outcome.rows})
    )


# The view's own columns, not the row's values, in a preview's text.
_VIEW_OWN = ("version", "row_id", "row_index", "rejected", "causes")


def _view_metadata(duckdb: FoundryDuckDB, view: str, version: str) -> dict[str, Any]:
    """The recipe view's columns and a preview of the version's first rows, kept and held
    back (``rejected``, with its ``causes``). ``view`` is ``recipe_<name>``, a checked
    identifier (``lib/recipes/cells.py``)."""
    with duckdb.get_connection() as con:
        described = con.execute(f"DESCRIBE {view}").fetchall()
        picked = con.execute(
            f"SELECT * FROM (SELECT * FROM {view} WHERE version = ? AND NOT rejected "
            f"ORDER BY row_index LIMIT ?) UNION ALL BY NAME "
            f"(SELECT * FROM {view} WHERE version = ? AND rejected "
            f"ORDER BY row_index LIMIT ?) ORDER BY rejected, row_index",
            [version, PREVIEW_ROWS, version, PREVIEW_ROWS],
        )
        names = [d[0] for d in picked.description]
        rows = [dict(zip(names, r, strict=True)) for r in picked.fetchall()]
    schema = dg.TableSchema(columns=[dg.TableColumn(d[0], d[1]) for d in described])
    shown = [
        (str(r["row_id"]), r["version"], (r["causes"] or "rejected") if r["rejected"] else "kept",
         json.dumps({k: v for k, v in r.items() if k not in _VIEW_OWN}, default=str,
                    ensure_ascii=False))
        for r in rows
    ]  # fmt: skip
    return {
        "dagster/column_schema": dg.MetadataValue.table_schema(schema),
        "preview": preview_table(shown, group="version"),
    }


def cron_problem(recipe: Recipe) -> RecipeError | None:
    """The sentence for a ``schedule`` that is not a cron string Dagster takes."""
    if recipe.schedule is None or is_valid_cron_string(recipe.schedule):
        return None
    return recipe.error("schedule", f"{recipe.schedule!r} is not a cron string")


def recipe_definitions(raw: Any, source: Path) -> dg.Definitions:
    """The asset, job and schedule of the recipe ``raw`` (a defs.yaml's attributes) read
    from ``source``; a bad recipe's asset fails with its sentence."""
    folder = source.parent
    name = _safe_name(raw, folder)
    try:
        recipe = parse_recipe(raw, str(source), default_name=name)
        if (problem := cron_problem(recipe)) is not None:
            raise problem
    except RecipeError as exc:
        return _broken(name, str(exc))
    key = recipe_key(recipe.name)

    @dg.asset(
        key=key,
        group_name="datasets",
        kinds={"duckdb", "llm"},
        description=recipe.description or f"Rows of the dataset recipe {recipe.name} ({source}).",
        metadata={"recipe_file": dg.MetadataValue.path(str(source))},
    )
    def recipe_rows(
        context: dg.AssetExecutionContext, duckdb: FoundryDuckDB, slots: SlotsResource
    ) -> dg.MaterializeResult:
        return _run(context, recipe, folder, duckdb, slots)

    @dg.asset(
        key=export_key(recipe.name),
        group_name="datasets",
        kinds={"duckdb", "parquet"},
        deps=[key],
        description=(
            f"The rows of recipe {recipe.name} exported to data/datasets/{recipe.name}/<version>/"
            " with hygiene (secrets, near duplicates, splits by seed row): hf/rows/, openai/, "
            "samples.parquet, README.md (the card, with the recipe) and manifest.json."
        ),
    )
    def recipe_export(
        context: dg.AssetExecutionContext, config: RecipeExportConfig, duckdb: FoundryDuckDB
    ) -> dg.MaterializeResult:
        return _export(context, recipe, config, duckdb)

    job = _job(recipe)
    schedules = []
    if recipe.schedule:
        schedules.append(
            dg.ScheduleDefinition(
                name=f"recipe_{recipe.name}_schedule",
                job=job,
                cron_schedule=recipe.schedule,
                execution_timezone=settings.timezone(),
                default_status=dg.DefaultScheduleStatus.RUNNING,
            )
        )
    return dg.Definitions(
        assets=[recipe_rows, recipe_export],
        asset_checks=export_checks(export_key(recipe.name)),
        jobs=[job],
        schedules=schedules,
    )


def _job(recipe: Recipe) -> UnresolvedAssetJobDefinition:
    """``recipe_<name>_job``: the rows; with ``export: {on_schedule: true}`` the export too,
    after them, told to write no version when the rows are those of one already written."""
    if not recipe.export_on_schedule:
        return dg.define_asset_job(f"recipe_{recipe.name}_job", selection=[recipe_key(recipe.name)])
    export = export_key(recipe.name)
    return dg.define_asset_job(
        f"recipe_{recipe.name}_job",
        selection=[recipe_key(recipe.name), export],
        config={"ops": {export.to_python_identifier(): {"config": {"skip_unchanged": True}}}},
    )


def _broken(name: str, sentence: str) -> dg.Definitions:
    """A recipe that cannot run: its asset is there, and fails with ``sentence``."""
    log.warning("dataset recipe %s cannot run: %s", name, sentence)

    @dg.asset(
        key=recipe_key(name),
        group_name="datasets",
        kinds={"duckdb", "llm"},
        description=f"This dataset recipe cannot run: {sentence}",
        metadata={"recipe_error": sentence},
    )
    def broken_recipe() -> None:
        raise dg.Failure(description=sentence, allow_retries=False)

    return dg.Definitions(assets=[broken_recipe])


def recipe_file_definitions(path: Path) -> dg.Definitions:
    """The definitions of every recipe in the defs.yaml at ``path``."""
    try:
        found = read_recipe_file(path)
    except RecipeError as exc:
        return _broken(_safe_name(None, path.parent), str(exc))
    return dg.Definitions.merge(*(recipe_definitions(r.attributes, path) for r in found))


class _Scaffolder(dg.Scaffolder):
    def scaffold(self, request: dg.ScaffoldRequest) -> None:
        name = re.sub(r"[^a-z0-9_]", "_", request.target_path.name.lower())
        dg.scaffold_component(request, STARTER | {"name": name})


STARTER: dict[str, Any] = {
    "name": "my_recipe",
    "description": "Questions on a few topics, answered by the worker role and scored.",
    "rows": 5,
    "random_seed": 0,
    "columns": [
        {"name": "topic", "type": "sampler", "sampler": "category",
         "values": ["DuckDB", "NATS", "Dagster"], "weights": [2, 1, 1]},
        {"name": "question", "type": "expression",
         "expr": "How do I get started with {{ topic }}?"},
        {"name": "answer", "type": "llm_text", "role": "worker",
         "prompt": "{{ question }}", "params": {"max_tokens": 256}},
        {"name": "score", "type": "llm_judge", "prompt":
         "Question: {{ question }}\nAnswer: {{ answer }}\nScore the answer.",
         "scores": [{"name": "helpful", "description": "Does it help?", "min": 1, "max": 5}]},
    ],
}  # fmt: skip


class RecipeSeedAttributes(dg.Model):
    """Where the seed rows come from: exactly one of file or sql."""

    file: str | None = Field(
        default=None, description="A .jsonl, .csv or .parquet file, relative to this folder."
    )
    sql: str | None = Field(default=None, description="A query over the DuckDB file, read-only.")
    incremental: str | None = Field(
        default=None,
        description="An sql seed's integer position column (such as commit_seq): each run "
        "takes only the rows past the last run's.",
    )


class ExportAttributes(dg.Model):
    on_schedule: bool = Field(
        default=False,
        description="The job (and so the schedule) exports after each run, writing no version "
        "when no cell is new.",
    )


ColumnAttributes = column_attributes()


@dg.scaffold_with(_Scaffolder)
class DatasetRecipe(dg.Component, dg.Resolvable, dg.Model):
    """A dataset declared in YAML: seed rows, samplers, Jinja expressions, LLM text,
    structured and judge columns and validations, generated through the slots with every
    cell asked once (docs/recipes.md)."""

    name: Annotated[str | None, _field("The recipe's name (a-z, 0-9, _): asset recipe_<name>.")] = (
        None
    )
    description: Annotated[
        str | None, _field("What the dataset is, for the asset's description.")
    ] = None
    seed: Annotated[
        RecipeSeedAttributes | None,
        _field(
            "Seed rows: {file: rows.jsonl|.csv|.parquet} (relative to this folder) or "
            "{sql: SELECT ...} over the DuckDB file, read-only.",
            [{"sql": "SELECT DISTINCT query FROM semantic_searches"}],
        ),
    ] = None
    rows: Annotated[
        int | None, _field("Rows to generate without a seed; at most this many with one.")
    ] = None
    random_seed: Annotated[int | None, _field("Seed of the samplers and of each request.")] = None
    schedule: Annotated[
        str | None, _field("Cron for recipe_<name>_schedule; unset: no schedule.")
    ] = None
    gates: Annotated[
        bool | dict[str, Any] | None,
        _field("Quality gates: false to switch off, or {skip: [...], thresholds}."),
    ] = None
    export: Annotated[
        ExportAttributes | None,
        _field(
            "{on_schedule: true}: the job (and so the schedule) exports after each run, "
            "writing no version when no cell is new.",
            [{"on_schedule": True}],
        ),
    ] = None
    columns: Annotated[
        list[ColumnAttributes] | None,  # type: ignore[valid-type]
        _field(
            f"The columns, each {{name, type, ...}}; type: {', '.join(COLUMN_TYPES)}, each "
            "with its own fields (docs/recipes.md).",
            typed=list[ColumnAttributes] | None,  # type: ignore[valid-type]
        ),
    ] = None

    _given: Any = PrivateAttr(default_factory=dict)

    @classmethod
    def get_model_cls(cls) -> type[BaseModel]:
        return _lenient(cls.model())

    @classmethod
    def load(cls, attributes: BaseModel | None, context: dg.ComponentLoadContext) -> Self:
        component = cls()
        component._given = getattr(attributes, "_given", None) or {}
        return component

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        return recipe_definitions(self._given, context.path / "defs.yaml")


@functools.cache
def _lenient(typed: type[BaseModel]) -> type[BaseModel]:
    """The typed attributes as ``dg`` shows them, taking any YAML: what they do not accept
    is left to the recipe's own check, which names it in a sentence on the recipe's asset,
    where Dagster's would take the code location down. The YAML is kept as given (the types
    would coerce "5" to 5, which the recipe refuses)."""

    class RecipeAttributes(typed):  # type: ignore[misc, valid-type]
        _given: Any = PrivateAttr(default=None)

        @model_validator(mode="wrap")
        @classmethod
        def _keep_given(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
            try:
                model = handler(data)
            except ValidationError:
                model = cls.model_construct()
            model._given = data
            return model

    return RecipeAttributes


__all__ = [
    "STARTER",
    "DatasetRecipe",
    "RecipeExportConfig",
    "cron_problem",
    "export_key",
    "recipe_definitions",
    "recipe_file_definitions",
    "recipe_key",
]  # fmt: skip
