"""Inbox asset checks: unique event ids, correlation ids present, a small dead-letter share."""

import dagster as dg
from pydantic import Field

from model_foundry.defs.inbox.assets import (
    pipeline_event_inbox_record,
)
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.lib import settings
from model_foundry.lib.inbox.quality import id_counts, missing_correlation_ids, subject_counts


class DeadLetterShareConfig(dg.Config):
    max_share: float = Field(
        default_factory=settings.dead_letter_max_share,
        description="Highest acceptable dead letters / all delivered messages, per subject.",
    )


@dg.asset_check(asset=pipeline_event_inbox_record, description="No event_id is stored twice.")
def inbox_event_ids_unique(duckdb: FoundryDuckDB) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        counts = id_counts(con)
    return dg.AssetCheckResult(
        passed=counts.duplicate_rows == 0,
        metadata={"rows": counts.rows, "duplicate_rows": counts.duplicate_rows},
    )


@dg.asset_check(
    asset=pipeline_event_inbox_record, description="Every stored event names its session."
)
def inbox_correlation_ids_present(duckdb: FoundryDuckDB) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        missing = missing_correlation_ids(con)
    return dg.AssetCheckResult(passed=missing == 0, metadata={"missing": missing})


@dg.asset_check(
    asset=pipeline_event_inbox_record,
    description="Dead letters stay a small share of what each subject delivers.",
)
def inbox_dead_letter_share(
    config: DeadLetterShareConfig, duckdb: FoundryDuckDB
) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        shares = {c.subject: c.dead_share for c in subject_counts(con)}
    worst = max(shares.values(), default=0.0)
    return dg.AssetCheckResult(
        passed=worst <= config.max_share,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "max_share": config.max_share,
            "worst_share": worst,
            "shares": dg.MetadataValue.json(shares),
        },
    )


inbox_checks = [inbox_event_ids_unique, inbox_correlation_ids_present, inbox_dead_letter_share]
