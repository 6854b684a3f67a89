"""The dataset_samples asset, its job and its nightly schedule."""

import time
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field

from model_foundry.defs import keys
from model_foundry.defs.metadata import dagster_metadata
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib import settings
from model_foundry.lib.datasets.export import UnsafeNameError, export_dataset, export_dir
from model_foundry.lib.datasets.prompts import (
    PromptRecord,
    dedupe_prompts,
    duplicates_line,
    load_chat_session_prompts,
    load_prompt_files,
)
from model_foundry.lib.datasets.samples import (
    DatasetSamples,
    chat_roles,
    default_version,
    sample_counts,
)
from model_foundry.lib.llm import LlmRun


class DatasetCollectionConfig(dg.Config):
    name: str = Field(default="foundry", description="Dataset name (a folder under datasets/).")
    version: str | None = Field(
        default=None, description="Dataset version; unset: today's UTC date (YYYYMMDD)."
    )
    prompt_dir: str | None = Field(
        default=None, description="JSONL/Parquet prompt files; unset: <data dir>/prompts."
    )
    include_chat_sessions: bool = Field(
        default=True, description="Also use each inbox chat session's opening user message."
    )
    max_chat_prompts: int = Field(default=200, description="At most this many session prompts.")
    roles: list[str] | None = Field(
        default=None, description="Roles to ask; unset: every chat slot of the active profile."
    )
    samples_per_prompt: int = Field(default=1, ge=1, description="Samples per prompt and role.")
    max_tokens: int | None = Field(default=None, description="Overrides the slots' max_tokens.")
    temperature: float | None = Field(default=None, description="Overrides the temperature.")
    export: bool = Field(default=True, description="Write Parquet + JSONL after collecting.")
    output_dir: str | None = Field(
        default=None, description="Export root; unset: <data dir>/datasets."
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
    version = config.version or default_version()
    out_root = Path(config.output_dir) if config.output_dir else settings.data_dir() / "datasets"
    try:
        # Before any slot is asked: a name that would escape data/datasets/ is refused.
        export_dir(out_root, config.name, version)
    except UnsafeNameError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    prompts, read = _prompts(context, config, duckdb)
    params: dict[str, Any] = {}
    if config.max_tokens is not None:
        params["max_tokens"] = config.max_tokens
    if config.temperature is not None:
        params["temperature"] = config.temperature
    kind = DatasetSamples(config.name, version, params)
    run = LlmRun(
        duckdb.database, slots, run_id=context.run.run_id, asset="dataset_samples",
        log=context.log,
    )  # fmt: skip
    with run:
        roles = config.roles or chat_roles(run.slot_file, run.profile)
        samples = kind.samples(prompts, roles, config.samples_per_prompt)
        context.log.info(
            f"dataset {config.name}/{version}: {len(prompts)} distinct prompts "
            f"({read['duplicate_prompts_dropped']} duplicates dropped) x {len(roles)} roles "
            f"({', '.join(roles)}) x {config.samples_per_prompt} samples = {len(samples)} requests"
        )
        outcome = run.work(kind, samples)
        metadata: dict[str, Any] = {
            "dataset": config.name,
            "version": version,
            "samples_written": outcome.written,
            **sample_counts(outcome.rows),
            **outcome.batch.metadata(),
        }
        if config.export:
            started = time.perf_counter()
            exported = export_dataset(duckdb.database, config.name, version, out_root)
            context.log.info(f"exported {exported.rows} samples to {exported.path}")
            run.emit(
                "model_foundry.dataset_export",
                dataset=config.name,
                version=version,
                samples=outcome.written,
                samples_by_role=metadata["samples_by_role"],
                rows=exported.rows,
                jsonl_rows=exported.jsonl_rows,
                seconds=round(time.perf_counter() - started, 3),
            )
            metadata.update(
                {
                    "export_path": exported.path,
                    "dagster/row_count": exported.rows,
                    "parquet_rows": exported.rows,
                    "jsonl_rows": exported.jsonl_rows,
                }
            )
    # "prompts" counts distinct prompts, i.e. after duplicates were dropped.
    metadata.update(prompts=len(prompts), **read, roles=roles, **run.telemetry.metadata())
    return dg.MaterializeResult(metadata=dagster_metadata(metadata))


def _prompts(
    context: dg.AssetExecutionContext, config: DatasetCollectionConfig, duckdb: FoundryDuckDB
) -> tuple[list[PromptRecord], dict[str, int]]:
    """The distinct prompts of every source, and how many were read, dropped and refused."""
    prompt_dir = Path(config.prompt_dir) if config.prompt_dir else settings.data_dir() / "prompts"
    prompts, problems = load_prompt_files(prompt_dir)
    for problem in problems[:20]:
        context.log.warning(f"skipped prompt {problem}")
    if config.include_chat_sessions:
        prompts += load_chat_session_prompts(duckdb.database, config.max_chat_prompts)
    read = len(prompts)
    prompts, duplicates = dedupe_prompts(prompts)
    if duplicates:
        context.log.info(duplicates_line(duplicates))
    return prompts, {
        "prompts_read": read,
        "duplicate_prompts_dropped": len(duplicates),
        "prompt_problems": len(problems),
    }


dataset_collection_job = dg.define_asset_job(
    "dataset_collection_job",
    selection=dg.AssetSelection.assets(dataset_samples, keys.SESSION_DATASET),
    description=(
        "Collect a versioned dataset from the prompt sources and export it, and export the "
        "finished sessions' trajectories."
    ),
)


def dataset_cron() -> str:
    return settings.dataset_cron()


dataset_collection_schedule = dg.ScheduleDefinition(
    name="dataset_collection_schedule",
    job=dataset_collection_job,
    cron_schedule=dataset_cron(),
    execution_timezone=settings.timezone(),
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Nightly dataset collection (MODEL_FOUNDRY_DATASET_CRON, default 03:00 UTC).",
)
