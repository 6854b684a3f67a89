"""The session dataset export: finished session trajectories -> a versioned, clean folder.

Run nightly with the dataset collection (``dataset_collection_job``); its figures are the
materialization's metadata. ``model-foundry dataset sessions`` runs the same export outside
the daemon.
"""

import dagster as dg
from pydantic import Field

from model_foundry.defs import keys
from model_foundry.defs.export_checks import export_checks
from model_foundry.defs.metadata import dagster_metadata, export_view_metadata
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.lib.exports.hygiene import export_hygiene
from model_foundry.lib.exports.names import UnsafeNameError
from model_foundry.lib.exports.prepare import SESSION_FILTERS
from model_foundry.lib.exports.published import empty_split_warning, figures_line
from model_foundry.lib.trajectories.export import (
    export_session_dataset,
    session_export_request,
)


class SessionExportConfig(dg.Config):
    name: str = Field(default="sessions", description="Dataset name (a folder under datasets/).")
    version: str | None = Field(
        default=None, description="Version; unset: the UTC date, suffixed when it is finished."
    )
    since: str | None = Field(default=None, description="Sessions active at or after (ISO).")
    until: str | None = Field(default=None, description="Sessions begun before (ISO time).")
    license: str | None = Field(default=None, description="The card's license; unset: unknown.")
    include_active: bool = Field(default=False, description="Also export running sessions.")
    filters: list[str] = Field(
        default=list(SESSION_FILTERS), description="Quality filters (each one's removals counted)."
    )
    test_share: float = Field(default=0.05, description="Share of new groups sent to test.")
    output_dir: str | None = Field(default=None, description="Export root; unset: datasets/.")


@dg.asset(
    key=keys.SESSION_DATASET,
    group_name="datasets",
    kinds={"duckdb", "parquet"},
    deps=[keys.SESSION_TRAJECTORIES],
    description=(
        "Finished sessions' trajectories exported to data/datasets/<name>/<version>/ with "
        "hygiene (secrets, PII, near duplicates, grouped splits, quality flags): openai/, hf/, "
        "samples.parquet, README.md (dataset card) and manifest.json."
    ),
)
def session_dataset(
    context: dg.AssetExecutionContext, config: SessionExportConfig, duckdb: FoundryDuckDB
) -> dg.MaterializeResult:
    try:
        request = session_export_request(
            config.name,
            version=config.version,
            since=config.since,
            until=config.until,
            license=config.license,
            include_active=config.include_active,
            filters=config.filters,
            test_share=config.test_share,
            output_dir=config.output_dir,
            run=f"dagster run {context.run.run_id}",
        )
        outcome = export_session_dataset(duckdb.database, request, export_hygiene)
    except (UnsafeNameError, ValueError) as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    context.log.info(figures_line(outcome))
    f = outcome.figures
    warning = empty_split_warning(outcome, config.test_share)
    if warning:
        context.log.warning(warning)
    return dg.MaterializeResult(
        metadata=dagster_metadata(
            {
                "export_path": str(outcome.path),
                "version": f.version,
                "dagster/row_count": sum(f.rows_by_split.values()),
                "rows_by_split": f.rows_by_split,
                "redactions_by_kind": f.redactions_by_kind,
                "clusters": f.clusters,
                "duplicates_removed": f.duplicates_removed,
                "removed_by_filter": f.removed_by_filter,
                "split_joins": f.split_joins,
                "sessions": f.sessions,
                **({"split_warning": warning} if warning else {}),
                **export_view_metadata(outcome.path),
            }
        )
    )


session_dataset_checks = export_checks(keys.SESSION_DATASET)
