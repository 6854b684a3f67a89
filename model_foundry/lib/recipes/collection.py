"""One dataset collection, start to finish, in plain code: the prompts of every source
(``lib/datasets/prompts.py``), the collection's built-in recipe over the profile's roles
(``collect.py``), then the export.

The ``dataset_samples`` asset runs :func:`collect_samples` inside Dagster (its run id, its
log, its resources) and shows the figures as its materialization; ``model-foundry dataset
collect`` runs the same function with a ``logging`` logger, so its first request leaves
before Dagster is loaded at all.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from model_foundry.lib.errors import UserError
from model_foundry.lib.exports.names import UnsafeNameError
from model_foundry.lib.exports.versions import choose_version
from model_foundry.lib.inbox.commit_spans import Span
from model_foundry.lib.llm import LlmRun
from model_foundry.lib.llm.run import Log, SlotSource
from model_foundry.lib.recipes.collect import collect
from model_foundry.lib.recipes.roles import JudgeRefusedError, require_judge_slot
from model_foundry.lib.slots.config import Slot

if TYPE_CHECKING:
    from model_foundry.lib.exports.published import ExportTarget


class CollectionRefused(UserError):
    """A collection that cannot run as asked (an unsafe or finished version, an eval set that
    cannot be used, judging without a judge, a prompt no slot can take); one sentence."""


@dataclass(frozen=True)
class Collection:
    """What one collection asks for; the asset's run config has the same fields, described."""

    name: str = "foundry"
    version: str | None = None
    license: str | None = None
    test_share: float = 0.05
    prompt_dir: str | None = None
    include_chat_sessions: bool = True
    max_chat_prompts: int = 200
    roles: tuple[str, ...] | None = None
    samples_per_prompt: int = 1
    max_tokens: int | None = None
    temperature: float | None = None
    export: bool = True
    judge: bool = False
    output_dir: str | None = None

    @classmethod
    def of(cls, fields: Mapping[str, Any]) -> Collection:
        roles = fields.get("roles")
        return cls(**{**fields, "roles": tuple(roles) if roles is not None else None})

    @property
    def out_root(self) -> Path:
        return Path(self.output_dir) if self.output_dir else settings.data_dir() / "datasets"


def require_judge(slots: SlotSource) -> Slot:
    """The active profile's judge slot; :class:`CollectionRefused` when it has none."""
    try:
        return require_judge_slot(slots.load(), slots.profile)
    except JudgeRefusedError as exc:
        raise CollectionRefused(str(exc)) from None


def collect_samples(
    c: Collection,
    database: str | Path,
    slots: SlotSource,
    *,
    run_id: str | None,
    log: Log,
    provenance: str,
) -> dict[str, Any]:
    """Collect (and unless judged or unfinished, export) one version; its figures, as the
    asset's materialization shows them. ``provenance`` names the run in the export's
    manifest ("dagster run <id>")."""
    try:
        # Before any slot is asked: a name that would escape data/datasets/, or a version
        # already exported (never changed), is refused in one sentence.
        version = choose_version(c.out_root, c.name, c.version)
        # The eval sets' indexes too (built now if their files changed): a file that cannot
        # be used fails the run here, having paid nothing.
        decontaminator()
    except (UnsafeNameError, EvalSetError) as exc:
        raise CollectionRefused(str(exc)) from None
    if c.judge:
        # Refused before any slot is asked: judged answers need a judge.
        require_judge(slots)
    prompts, read, chat_span = _prompts(c, database, log)
    params: dict[str, Any] = {}
    if c.max_tokens is not None:
        params["max_tokens"] = c.max_tokens
    if c.temperature is not None:
        params["temperature"] = c.temperature
    run = LlmRun(database, slots, run_id=run_id, asset="dataset_samples", log=log)
    with run:
        roles = list(dict.fromkeys(c.roles or chat_roles(run.slot_file, run.profile)))
        n = c.samples_per_prompt
        log.info(
            f"dataset {c.name}/{version}: {len(prompts)} distinct prompts "
            f"({read['duplicate_prompts_dropped']} duplicates dropped) x {len(roles)} roles "
            f"({', '.join(roles)}) x {n} samples = {len(prompts) * len(roles) * n} requests"
        )
        try:
            done = collect(run, c.name, version, prompts, roles, n, params)
        except ValueError as exc:
            raise CollectionRefused(str(exc)) from None
        if done.migrated:
            log.warning(
                f"{done.migrated} samples stored before collection was a recipe are now cells "
                "of their datasets' built-in recipes (once per file)"
            )
        metadata: dict[str, Any] = {
            "dataset": c.name,
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
        if c.export and failed:
            # An exported version is finished for good: one with requests still to answer
            # stays unfinished, so the next run resumes it instead of being refused.
            log.warning(
                f"dataset {c.name}/{version}: {failed} requests failed, so it is not "
                "exported yet; run the collection again to finish and export it"
            )
        elif c.export and c.judge:
            log.info(
                f"dataset {c.name}/{version}: exported after dataset_judgements, with its "
                "preference pairs"
            )
        elif c.export:
            # The export's modules (Arrow, numpy, the writers) load once the answers are in,
            # not before the first request.
            from model_foundry.lib.exports.published import ExportTarget

            target = ExportTarget(c.out_root, c.name, version, c.license)
            metadata.update(
                export_collection(
                    run, database, target, c.test_share, metadata, log=log, provenance=provenance
                )
            )
        if not failed and chat_span is not None:
            # Finished: the next version asks the sessions that begin after these.
            advance_chat_prompts(database, chat_span)
    # "prompts" counts distinct prompts, i.e. after duplicates were dropped.
    metadata.update(prompts=len(prompts), **read, roles=roles, **run.telemetry.metadata())
    metadata.update(run.template_metadata())
    return metadata


def asked_metadata(run: LlmRun, cells_reused: int) -> dict[str, Any]:
    """The run's request figures, the cells the recipe took as stored counted as requests
    answered from the store: to the user both are answers paid for before, not sent again."""
    meta = run.batch.metadata()
    meta["requests"] += cells_reused
    meta["reused_from_store"] += cells_reused
    meta["ok"] += cells_reused
    return meta


def export_collection(
    run: LlmRun,
    database: str | Path,
    target: ExportTarget,
    test_share: float,
    collected: Mapping[str, Any],
    *,
    log: Log,
    provenance: str,
    judged: bool = False,
) -> dict[str, Any]:
    """Export the version's samples (and with ``judged``, its preference pairs) with hygiene;
    the export's figures. ``collected`` is the collection's figures (the samples its run
    wrote, by role), for the export's telemetry event."""
    started = time.perf_counter()
    from model_foundry.lib.datasets.sample_export import export_samples
    from model_foundry.lib.exports.hygiene import export_hygiene
    from model_foundry.lib.exports.published import empty_split_warning, figures_line

    hygiene = export_hygiene(Path(database), target.name, test_share)
    try:
        outcome = export_samples(database, target, hygiene, provenance, judged=judged)
    except EvalSetError as exc:  # the file changed since the run began
        raise CollectionRefused(str(exc)) from None
    log.info(figures_line(outcome))
    f = outcome.figures
    warning = empty_split_warning(outcome, test_share)
    if warning:
        log.warning(warning)
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
    }


def _prompts(
    c: Collection, database: str | Path, log: Log
) -> tuple[list[PromptRecord], dict[str, int], Span | None]:
    """The distinct prompts of every source, how many were read, dropped and refused, and
    the inbox span the chat session prompts came from."""
    prompt_dir = Path(c.prompt_dir) if c.prompt_dir else settings.data_dir() / "prompts"
    prompts, problems = load_prompt_files(prompt_dir)
    for problem in problems[:20]:
        log.warning(f"skipped prompt {problem}")
    chat_span = None
    if c.include_chat_sessions:
        chat = read_chat_session_prompts(database, c.max_chat_prompts, c.name)
        prompts += chat.prompts
        chat_span = chat.span
    read = len(prompts)
    prompts, duplicates = dedupe_prompts(prompts)
    if duplicates:
        log.info(duplicates_line(duplicates))
    # Near duplicates are asked once, before any slot is: one group per prompt cluster.
    prompts, near = near_duplicate_prompts(prompts)
    if near:
        log.info(duplicates_line(near, what="a near duplicate of"))
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


__all__ = [
    "Collection",
    "CollectionRefused",
    "asked_metadata",
    "collect_samples",
    "export_collection",
    "require_judge",
]
