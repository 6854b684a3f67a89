"""The dataset_samples asset, its job and its nightly schedule."""

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field

from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib import settings
from model_foundry.lib.completions import CompletionStore, fit_requests, progress_logger
from model_foundry.lib.datasets import (
    UnsafeNameError,
    chat_roles,
    dedupe_prompts,
    default_version,
    duplicates_line,
    export_dataset,
    export_dir,
    is_truncated,
    load_chat_session_prompts,
    load_prompt_files,
    plan_samples,
    write_samples,
)
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.telemetry import Telemetry, for_run


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
    group_name="datasets",
    kinds={"duckdb", "llm", "parquet"},
    deps=[dg.AssetKey("chat_messages")],
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
    try:
        # Before any slot is asked: a name that would escape data/datasets/ is refused.
        export_dir(
            Path(config.output_dir or settings.data_dir() / "datasets"), config.name, version
        )
    except UnsafeNameError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    prompt_dir = Path(config.prompt_dir) if config.prompt_dir else settings.data_dir() / "prompts"
    prompts, problems = load_prompt_files(prompt_dir)
    for problem in problems[:20]:
        context.log.warning(f"skipped prompt {problem}")
    if config.include_chat_sessions:
        prompts += load_chat_session_prompts(duckdb.database, config.max_chat_prompts)
    prompts_read = len(prompts)
    prompts, duplicates = dedupe_prompts(prompts)
    if duplicates:
        context.log.info(duplicates_line(duplicates))
    slot_file = slots.load()
    roles = config.roles or chat_roles(slot_file, slots.profile)
    params: dict[str, Any] = {}
    if config.max_tokens is not None:
        params["max_tokens"] = config.max_tokens
    if config.temperature is not None:
        params["temperature"] = config.temperature
    planned = plan_samples(
        prompts,
        slot_file,
        name=config.name,
        roles=roles,
        samples=config.samples_per_prompt,
        profile=slots.profile,
        params=params,
    )
    context.log.info(
        f"dataset {config.name}/{version}: {len(prompts)} distinct prompts "
        f"({len(duplicates)} duplicates dropped) x {len(roles)} roles ({', '.join(roles)}) x "
        f"{config.samples_per_prompt} samples = {len(planned)} requests"
    )
    with for_run(context.run.run_id, "dataset_samples") as telemetry:
        metadata = _collect(context, config, duckdb, slot_file, slots, planned, version, telemetry)
        # "prompts" counts distinct prompts, i.e. after duplicates were dropped.
        metadata.update(
            prompts=len(prompts),
            prompts_read=prompts_read,
            duplicate_prompts_dropped=len(duplicates),
            prompt_problems=len(problems),
        )
        metadata["roles"] = dg.MetadataValue.json(roles)
    metadata.update(telemetry.metadata())
    return dg.MaterializeResult(metadata=metadata)


def _collect(
    context: dg.AssetExecutionContext,
    config: DatasetCollectionConfig,
    duckdb: FoundryDuckDB,
    slot_file: SlotFile,
    slots: SlotsResource,
    planned: list,
    version: str,
    telemetry: Telemetry,
) -> dict[str, Any]:
    """Ask the slots, write the samples, export them; the materialization's metadata."""
    # Each prompt goes only to slots whose context holds it; one no slot holds is recorded
    # (PromptTooLong) and not sent.
    with slots.context_book(slot_file) as book:
        fitted = fit_requests([p[-1] for p in planned], book, slot_file, slots.profile)
    planned = [(*p[:-1], r) for p, r in zip(planned, fitted, strict=True)]
    too_long = [r for r in fitted if r.unfit_reason]
    if too_long:
        context.log.warning(
            f"{len(too_long)} dataset prompts fit no slot's context and are not sent, e.g.: "
            f"{too_long[0].unfit_reason}"
        )
    store = CompletionStore(duckdb.database, run_id=context.run.run_id, telemetry=telemetry)
    batch = store.run(
        [p[-1] for p in planned],
        slot_file,
        slots.profile,
        options=slots.dispatch_options(),
        progress=progress_logger(context.log.info, f"dataset {config.name}/{version}"),
    )
    rows = []
    by_role: Counter[str] = Counter()
    flags: Counter[str] = Counter()
    for prompt, role, i, request in planned:
        c = batch.results.get(request.key)
        if c is None:
            continue
        by_role[role] += 1
        empty, truncated = not c.content.strip(), is_truncated(c.finish_reason)
        flags.update(empty=empty, truncated=truncated)
        rows.append(
            (
                config.name,
                version,
                request.key,
                prompt.prompt_id,
                prompt.source,
                role,
                i,
                json.dumps(prompt.messages, ensure_ascii=False),
                prompt.prompt_text,
                c.content,
                c.reasoning,
                c.slot,
                c.model,
                json.dumps(request.output_params, sort_keys=True),
                c.prompt_tokens,
                c.completion_tokens,
                c.finish_reason,
                # is_empty: always false now (the store never returns a blank answer, it is an
                # EmptyAnswer error); the column stays for the table's and exports' schema.
                empty,
                truncated,
                context.run.run_id,
            )
        )
    written = write_samples(duckdb.database, rows)
    metadata: dict[str, Any] = {
        "dataset": config.name,
        "version": version,
        "samples_written": written,
        "empty": flags["empty"],
        "truncated": flags["truncated"],
        "samples_by_role": dg.MetadataValue.json(dict(sorted(by_role.items()))),
        **batch.metadata(),
    }
    if config.export:
        out_root = (
            Path(config.output_dir) if config.output_dir else settings.data_dir() / "datasets"
        )
        started = time.perf_counter()
        exported = export_dataset(duckdb.database, config.name, version, out_root)
        context.log.info(f"exported {exported.rows} samples to {exported.path}")
        telemetry.emit(
            "model_foundry.dataset_export",
            dataset=config.name,
            version=version,
            samples=written,
            samples_by_role=dict(by_role),
            rows=exported.rows,
            jsonl_rows=exported.jsonl_rows,
            seconds=round(time.perf_counter() - started, 3),
        )
        metadata.update(
            {
                "export_path": dg.MetadataValue.path(str(exported.path)),
                "dagster/row_count": exported.rows,
                "parquet_rows": exported.rows,
                "jsonl_rows": exported.jsonl_rows,
            }
        )
    return metadata


dataset_collection_job = dg.define_asset_job(
    "dataset_collection_job",
    selection=dg.AssetSelection.assets(dataset_samples),
    description="Collect a versioned dataset from the prompt sources and export it.",
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
