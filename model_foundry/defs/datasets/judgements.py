"""The dataset_judgements asset: the judge slot compares the collected answers, then the
version is exported with its preference pairs (only with ``judge: true``)."""

from pathlib import Path
from typing import Any

import dagster as dg

from model_foundry.defs import keys
from model_foundry.defs.datasets.assets import (
    DatasetCollectionConfig,
    export_collection,
    require_judge,
)
from model_foundry.defs.export_checks import export_checks
from model_foundry.defs.metadata import dagster_metadata
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib import settings
from model_foundry.lib.datasets.preference_card import win_rate_table
from model_foundry.lib.datasets.preferences import preference_figures, preference_line
from model_foundry.lib.exports.names import UnsafeNameError
from model_foundry.lib.exports.published import ExportTarget
from model_foundry.lib.exports.versions import FinishedVersionError, choose_version
from model_foundry.lib.hygiene.shown import shown_text
from model_foundry.lib.llm import LlmRun, nothing_asked
from model_foundry.lib.recipes.judged import judge as judge_version
from model_foundry.lib.recipes.judged import unparsed_causes
from model_foundry.lib.recipes.roles import JudgeSlots


def _collected(
    context: dg.AssetExecutionContext, config: DatasetCollectionConfig, out_root: Path
) -> tuple[str, dict[str, Any]]:
    """The version dataset_samples last collected for this name (so a run that passes
    midnight judges the version it collected) and that materialization's metadata."""
    event = context.instance.get_latest_materialization_event(keys.DATASET_SAMPLES)
    found = event.asset_materialization.metadata if event and event.asset_materialization else {}
    meta = {k: getattr(v, "value", v) for k, v in found.items()}
    version = meta.get("version") if meta.get("dataset") == config.name else None
    if config.version is not None or version is None:
        return choose_version(out_root, config.name, config.version), {}
    return str(version), meta


@dg.asset(
    key=keys.DATASET_JUDGEMENTS,
    group_name="datasets",
    kinds={"duckdb", "llm", "parquet"},
    deps=[keys.DATASET_SAMPLES],
    description=(
        "With judge: true, the profile's judge slot compares each prompt's answers in both "
        "orders (JSON-schema constrained); the version is then exported with the agreed "
        "pairs as its preference config. The model_preferences view has the win rates."
    ),
)
def dataset_judgements(
    context: dg.AssetExecutionContext,
    config: DatasetCollectionConfig,
    duckdb: FoundryDuckDB,
    slots: SlotsResource,
) -> dg.MaterializeResult:
    if not config.judge:
        return dg.MaterializeResult(metadata={"judge": False})
    judge = require_judge(slots)
    out_root = Path(config.output_dir) if config.output_dir else settings.data_dir() / "datasets"
    try:
        version, collected = _collected(context, config, out_root)
    except UnsafeNameError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    run = LlmRun(
        duckdb.database, JudgeSlots(slots), run_id=context.run.run_id,
        asset="dataset_judgements", log=context.log,
    )  # fmt: skip
    metadata: dict[str, Any] = {"dataset": config.name, "version": version}
    with run:
        # The built-in judge recipe (lib/recipes/collect_judge.py): one cell per comparison,
        # both orders; dataset_judgements is filled from its cells.
        judged = judge_version(run, config.name, version, judge.name)
        plan = judged.plan
        context.log.info(
            f"judgements {config.name}/{version}: {plan.pairs} answer pairs of "
            f"{plan.prompts} prompts, {len(plan.comparisons)} for {judge.name} "
            f"({plan.self_skipped} pairs with its own answers skipped, "
            f"{judged.outcome.cells_reused} judged before)"
        )
        unparsed = sum(r.status != "ok" for r in judged.rows)
        metadata.update(
            **plan.metadata(), judge_recipe=judged.outcome.recipe,
            cells_asked=judged.outcome.llm_cells_asked,
            cells_reused=judged.outcome.cells_reused,
            judgements_written=judged.written, judgements_unparsed=unparsed,
            unparsed_causes=unparsed_causes(judged.rows),
        )  # fmt: skip
        if judged.migrated is not None:
            metadata["verdicts_migrated"] = judged.migrated
        metadata.update(run.batch.metadata() if run.batches else nothing_asked())
        if unparsed:
            # The cause may quote the judge's answer, which may quote the answers judged.
            first = shown_text(next(r.cause for r in judged.rows if r.cause))
            context.log.warning(f"{unparsed} judge answers did not parse, e.g.: {first}")
        figures = preference_figures(duckdb.database, config.name, version)
        context.log.info(preference_line(figures))
        metadata.update(
            judge_models=figures.judge_models, preference_pairs=figures.pairs,
            ties=figures.ties, comparisons_with_unparsed=figures.with_unparsed,
            pairs_by_pairing=figures.pairs_by_pairing, win_rates=figures.win_rates,
        )  # fmt: skip
        if figures.agreement_rate is not None:
            metadata["agreement_rate"] = figures.agreement_rate
        # A comparison too long for the judge's context never fits: it is left out (and
        # counted in prompts_too_long) rather than keeping the version from being exported.
        unfit = int(metadata.get("prompts_too_long") or 0)
        failed = int(metadata.get("failed") or 0) - unfit + int(collected.get("failed") or 0)
        if config.export and failed:
            context.log.warning(
                f"dataset {config.name}/{version}: {failed} requests failed, so it is not "
                "exported yet; run the collection again to finish and export it"
            )
        elif config.export:
            target = ExportTarget(out_root, config.name, version, config.license)
            try:
                metadata.update(
                    export_collection(
                        context, run, target, config.test_share, collected, judged=True
                    )
                )
            except FinishedVersionError as exc:
                context.log.warning(f"{exc}; its judgements are in dataset_judgements")
    metadata.update(run.telemetry.metadata())
    metadata.update(run.template_metadata())
    shown = dagster_metadata(metadata)
    shown["win_rate_table"] = dg.MetadataValue.md(win_rate_table(figures.win_rates))
    return dg.MaterializeResult(metadata=shown)


dataset_judgements_checks = export_checks(keys.DATASET_JUDGEMENTS)
