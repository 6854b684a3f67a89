"""The dataset_samples asset, its job and its nightly schedule."""

import time
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
from model_foundry.lib.datasets.prompts import (
    PromptRecord,
    advance_chat_prompts,
    dedupe_prompts,
    duplicates_line,
    load_prompt_files,
    near_duplicate_prompts,
    read_chat_session_prompts,
)
from model_foundry.lib.datasets.samples import chat_roles, sample_counts
from model_foundry.lib.decontamination.config import EvalSetError
from model_foundry.lib.decontamination.match import decontaminator
from model_foundry.lib.exports.names import UnsafeNameError
from model_foundry.lib.exports.versions import choose_version
from model_foundry.lib.inbox.commit_spans import Span
from model_foundry.lib.llm import LlmRun
from model_foundry.lib.recipes.collect import collect
from model_foundry.lib.recipes.roles import JudgeRefusedError, require_judge_slot
from model_foundry.lib.slots.config import Slot

if TYPE_CHECKING:
    from model_foundry.lib.exports.published import ExportTarget


class DatasetCollectionConfig(dg.Config):
    name: str = Field(default="foundry", description="Dataset name (a folder under datasets/).")
    version: str | None = Field(
        default=None,
        description="Dataset version; unset: today's UTC date (YYYYMMDD), suffixed when finished.",
    )
    license: str | None = Field(default=None, description="The card's license; unset: unknown.")
    test_share: float = Field(default=0.05, description="Share of new prompts sent to test.")
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
    export: bool = Field(
        default=True, description="Write the export folder (hygiene, views, card) after collecting."
    )
    judge: bool = Field(
        default=False,
        description=(
            "Have the profile's judge slot compare each prompt's answers (dataset_judgements) "
            "and export the agreed pairs as the preference config."
        ),
    )
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
    out_root = Path(config.output_dir) if config.output_dir else settings.data_dir() / "datasets"
    try:
        # Before any slot is asked: a name that would escape data/datasets/, or a version
        # already exported (never changed), is refused in one sentence.
        version = choose_version(out_root, config.name, config.version)
        # The eval sets' indexes too (built now if their files changed): a file that cannot
        # be used fails the run here, having paid nothing.
        decontaminator()
    except (UnsafeNameError, EvalSetError) as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    if config.judge:
        # Refused before any slot is asked: judged answers need a judge.
        require_judge(slots)
    prompts, read, chat_span = _prompts(context, config, duckdb)
    params: dict[str, Any] = {}
    if config.max_tokens is not None:
        params["max_tokens"] = config.max_tokens
    if config.temperature is not None:
        params["temperature"] = config.temperature
    run = LlmRun(
        duckdb.database, slots, run_id=context.run.run_id, asset="dataset_samples",
        log=context.log,
    )  # fmt: skip
    with run:
        roles = list(dict.fromkeys(config.roles or chat_roles(run.slot_file, run.profile)))
        n = config.samples_per_prompt
        context.log.info(
            f"dataset {config.name}/{version}: {len(prompts)} distinct prompts "
            f"({read['duplicate_prompts_dropped']} duplicates dropped) x {len(roles)} roles "
            f"({', '.join(roles)}) x {n} samples = {len(prompts) * len(roles) * n} requests"
        )
        try:
            done = collect(run, config.name, version, prompts, roles, n, params)
        except ValueError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from None
        if done.migrated:
            context.log.warning(
                f"{done.migrated} samples stored before collection was a recipe are now cells "
                "of their datasets' built-in recipes (once per file)"
            )
        metadata: dict[str, Any] = {
            "dataset": config.name,
            "version": version,
            "recipe": done.outcome.recipe,
            "cells_asked": done.outcome.llm_cells_asked,
            "cells_reused": done.outcome.cells_reused,
            "samples_migrated": done.migrated or 0,
            "samples_written": done.written,
            **sample_counts(done.rows),
            **asked_metadata(run, done.outcome.cells_reused),
        }
        failed = int(metadata.get("failed") or 0)
        if config.export and failed:
            # An exported version is finished for good: one with requests still to answer
            # stays unfinished, so the next run resumes it instead of being refused.
            context.log.warning(
                f"dataset {config.name}/{version}: {failed} requests failed, so it is not "
                "exported yet; run the collection again to finish and export it"
            )
        elif config.export and config.judge:
            context.log.info(
                f"dataset {config.name}/{version}: exported after dataset_judgements, with its "
                "preference pairs"
            )
        elif config.export:
            # The export's modules (Arrow, numpy, the writers) load once the answers are in,
            # not before the first request.
            from model_foundry.lib.exports.published import ExportTarget

            target = ExportTarget(out_root, config.name, version, config.license)
            metadata.update(
                export_collection(context, run, duckdb, target, config.test_share, metadata)
            )
        if not failed and chat_span is not None:
            # Finished: the next version asks the sessions that begin after these.
            advance_chat_prompts(duckdb.database, chat_span)
    # "prompts" counts distinct prompts, i.e. after duplicates were dropped.
    metadata.update(prompts=len(prompts), **read, roles=roles, **run.telemetry.metadata())
    metadata.update(run.template_metadata())
    return dg.MaterializeResult(metadata=dagster_metadata(metadata))


def asked_metadata(run: LlmRun, cells_reused: int) -> dict[str, Any]:
    """The run's request figures, the cells the recipe took as stored counted as requests
    answered from the store: to the user both are answers paid for before, not sent again."""
    meta = run.batch.metadata()
    meta["requests"] += cells_reused
    meta["reused_from_store"] += cells_reused
    meta["ok"] += cells_reused
    return meta


def require_judge(slots: SlotsResource) -> Slot:
    """The active profile's judge slot; a ``dg.Failure`` in one sentence when it has none."""
    try:
        return require_judge_slot(slots.load(), slots.profile)
    except JudgeRefusedError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None


def export_collection(
    context: dg.AssetExecutionContext,
    run: LlmRun,
    duckdb: FoundryDuckDB,
    target: "ExportTarget",
    test_share: float,
    collected: Mapping[str, Any],
    *,
    judged: bool = False,
) -> dict[str, Any]:
    """Export the version's samples (and with ``judged``, its preference pairs) with hygiene;
    the materialization's export figures. ``collected`` is dataset_samples' metadata (the
    samples its run wrote, by role), for the export's telemetry event."""
    started = time.perf_counter()
    from model_foundry.lib.datasets.sample_export import export_samples
    from model_foundry.lib.exports.hygiene import export_hygiene
    from model_foundry.lib.exports.published import empty_split_warning, figures_line

    hygiene = export_hygiene(Path(duckdb.database), target.name, test_share)
    try:
        outcome = export_samples(
            duckdb.database, target, hygiene, f"dagster run {context.run.run_id}", judged=judged
        )
    except EvalSetError as exc:  # the file changed since the run began
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    context.log.info(figures_line(outcome))
    f = outcome.figures
    warning = empty_split_warning(outcome, test_share)
    if warning:
        context.log.warning(warning)
    kept = sum(f.rows_by_split.values())
    run.emit(
        "model_foundry.dataset_export",
        dataset=target.name,
        version=target.version,
        samples=collected.get("samples_written", 0),
        samples_by_role=collected.get("samples_by_role") or {},
        rows=f.records,
        jsonl_rows=kept,
        preference_rows=sum(f.configs.get("preference", {}).values()),
        seconds=round(time.perf_counter() - started, 3),
    )
    return {
        "export_path": outcome.path,
        "dagster/row_count": f.records,
        "parquet_rows": f.records,
        "jsonl_rows": kept,
        "rows_by_split": f.rows_by_split,
        "redactions_by_kind": f.redactions_by_kind,
        "removed_by_filter": f.removed_by_filter,
        "held_back_by_gate": f.held_back_by_gate,
        "clusters": f.clusters,
        "split_joins": f.split_joins,
        **({"preference_rows_by_split": f.configs["preference"]} if judged else {}),
        **(
            {"preference_held_back_by_gate": f.preference["held_back_by_gate"]}
            if judged and f.preference
            else {}
        ),
        **({"split_warning": warning} if warning else {}),
        **export_view_metadata(outcome.path),
    }


dataset_samples_checks = export_checks(keys.DATASET_SAMPLES)


def _prompts(
    context: dg.AssetExecutionContext, config: DatasetCollectionConfig, duckdb: FoundryDuckDB
) -> tuple[list[PromptRecord], dict[str, int], Span | None]:
    """The distinct prompts of every source, how many were read, dropped and refused, and
    the inbox span the chat session prompts came from."""
    prompt_dir = Path(config.prompt_dir) if config.prompt_dir else settings.data_dir() / "prompts"
    prompts, problems = load_prompt_files(prompt_dir)
    for problem in problems[:20]:
        context.log.warning(f"skipped prompt {problem}")
    chat_span = None
    if config.include_chat_sessions:
        chat = read_chat_session_prompts(duckdb.database, config.max_chat_prompts, config.name)
        prompts += chat.prompts
        chat_span = chat.span
    read = len(prompts)
    prompts, duplicates = dedupe_prompts(prompts)
    if duplicates:
        context.log.info(duplicates_line(duplicates))
    # Near duplicates are asked once, before any slot is: one group per prompt cluster.
    prompts, near = near_duplicate_prompts(prompts)
    if near:
        context.log.info(duplicates_line(near, what="a near duplicate of"))
    return (
        prompts,
        {
            "prompts_read": read,
            "duplicate_prompts_dropped": len(duplicates),
            "near_duplicate_prompts_dropped": len(near),
            "prompt_problems": len(problems),
        },
        chat_span,
    )


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
