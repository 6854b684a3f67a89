"""The dataset_samples asset, its job and its nightly schedule."""

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field

from model_foundry.defs import keys
from model_foundry.defs.export_checks import export_checks
from model_foundry.defs.metadata import dagster_metadata, export_view_metadata
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib import settings
from model_foundry.lib.llm import LlmRun
from model_foundry.lib.recipes import collection
from model_foundry.lib.recipes.collection import Collection, CollectionRefused
from model_foundry.lib.slots.config import Slot

if TYPE_CHECKING:
    from model_foundry.lib.exports.published import ExportTarget

_DEFAULT = Collection()


class DatasetCollectionConfig(dg.Config):
    """The run config of a collection: :class:`Collection`'s fields and defaults, described."""

    name: str = Field(default=_DEFAULT.name, description="Dataset name (a folder under datasets/).")
    version: str | None = Field(
        default=_DEFAULT.version,
        description="Dataset version; unset: today's UTC date (YYYYMMDD), suffixed when finished.",
    )
    license: str | None = Field(
        default=_DEFAULT.license, description="The card's license; unset: unknown."
    )
    test_share: float = Field(
        default=_DEFAULT.test_share, description="Share of new prompts sent to test."
    )
    prompt_dir: str | None = Field(
        default=_DEFAULT.prompt_dir,
        description="JSONL/Parquet prompt files; unset: <data dir>/prompts.",
    )
    include_chat_sessions: bool = Field(
        default=_DEFAULT.include_chat_sessions,
        description="Also use each inbox chat session's opening user message.",
    )
    max_chat_prompts: int = Field(
        default=_DEFAULT.max_chat_prompts, description="At most this many session prompts."
    )
    roles: list[str] | None = Field(
        default=_DEFAULT.roles,
        description="Roles to ask; unset: every chat slot of the active profile.",
    )
    samples_per_prompt: int = Field(
        default=_DEFAULT.samples_per_prompt, ge=1, description="Samples per prompt and role."
    )
    max_tokens: int | None = Field(
        default=_DEFAULT.max_tokens, description="Overrides the slots' max_tokens."
    )
    temperature: float | None = Field(
        default=_DEFAULT.temperature, description="Overrides the temperature."
    )
    export: bool = Field(
        default=_DEFAULT.export,
        description="Write the export folder (hygiene, views, card) after collecting.",
    )
    judge: bool = Field(
        default=_DEFAULT.judge,
        description=(
            "Have the profile's judge slot compare each prompt's answers (dataset_judgements) "
            "and export the agreed pairs as the preference config."
        ),
    )
    output_dir: str | None = Field(
        default=_DEFAULT.output_dir, description="Export root; unset: <data dir>/datasets."
    )


@dg.asset(
    key=keys.DATASET_SAMPLES,
    group_name="datasets",
    kinds={"duckdb", "llm", "parquet"},
    deps=[keys.CHAT_MESSAGES],
    description=(
        "Samples for a fine-tuning dataset: every prompt source x every chat role of the "
        "active profile x N samples, then exported to data/datasets/<name>/<version>/."
    ),
)
def dataset_samples(
    context: dg.AssetExecutionContext,
    config: DatasetCollectionConfig,
    duckdb: FoundryDuckDB,
    slots: SlotsResource,
) -> dg.MaterializeResult:
    try:
        metadata = collection.collect_samples(
            Collection.of(config.model_dump()), duckdb.database, slots,
            run_id=context.run.run_id, log=context.log,
            provenance=f"dagster run {context.run.run_id}",
        )  # fmt: skip
    except CollectionRefused as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    return dg.MaterializeResult(metadata=dagster_metadata(with_export_views(metadata)))


def with_export_views(metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` and, where it names an export folder, that folder's schema and preview."""
    path = metadata.get("export_path")
    return {**metadata, **export_view_metadata(Path(path))} if path else metadata


def require_judge(slots: SlotsResource) -> Slot:
    """The active profile's judge slot; a ``dg.Failure`` in one sentence when it has none."""
    try:
        return collection.require_judge(slots)
    except CollectionRefused as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None


def export_collection(
    context: dg.AssetExecutionContext,
    run: LlmRun,
    target: "ExportTarget",
    test_share: float,
    collected: Mapping[str, Any],
    *,
    judged: bool = False,
) -> dict[str, Any]:
    """:func:`collection.export_collection` in a Dagster run: its figures, the folder's
    schema and preview, and a ``dg.Failure`` for an eval set that changed since."""
    try:
        figures = collection.export_collection(
            run, run.db_path, target, test_share, collected, log=context.log,
            provenance=f"dagster run {context.run.run_id}", judged=judged,
        )  # fmt: skip
    except CollectionRefused as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    return with_export_views(figures)


dataset_samples_checks = export_checks(keys.DATASET_SAMPLES)


dataset_collection_job = dg.define_asset_job(
    "dataset_collection_job",
    selection=dg.AssetSelection.assets(
        dataset_samples, keys.DATASET_JUDGEMENTS, keys.SESSION_DATASET
    ),
    description=(
        "Collect a versioned dataset from the prompt sources, judge its answers (judge: true) "
        "and export it, and export the finished sessions' trajectories."
    ),
)


def dataset_cron() -> str:
    return settings.dataset_cron()


def nightly_run_config() -> dict[str, Any]:
    """The nightly run's config: the defaults, and ``judge: true`` for both of the
    collection's steps when MODEL_FOUNDRY_DATASET_JUDGE says so."""
    if not settings.dataset_judge():
        return {}
    judged = {"config": {"judge": True}}
    return {"ops": {"dataset_samples": judged, "dataset_judgements": judged}}


dataset_collection_schedule = dg.ScheduleDefinition(
    name="dataset_collection_schedule",
    job=dataset_collection_job,
    cron_schedule=dataset_cron(),
    execution_timezone=settings.timezone(),
    run_config=nightly_run_config(),
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description=(
        "Nightly dataset collection (MODEL_FOUNDRY_DATASET_CRON, default 03:00 UTC; "
        "MODEL_FOUNDRY_DATASET_JUDGE=true judges the answers too)."
    ),
)
