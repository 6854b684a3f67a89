"""Inbox asset checks: unique event ids, correlation ids present, a small dead-letter share."""

import dagster as dg
from pydantic import Field

from model_foundry.defs.inbox.assets import (
    pipeline_event_inbox_record,
)
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.lib import settings


class DeadLetterShareConfig(dg.Config):
    max_share: float = Field(
        default_factory=settings.dead_letter_max_share,
        description="Highest acceptable dead letters / all delivered messages, per subject.",
    )


@dg.asset_check(asset=pipeline_event_inbox_record, description="No event_id is stored twice.")
def inbox_event_ids_unique(duckdb: FoundryDuckDB) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        total, distinct = con.execute(
            "SELECT count(*), count(DISTINCT event_id) FROM pipeline_event_inbox"
        ).fetchone()
    return dg.AssetCheckResult(
        passed=total == distinct, metadata={"rows": total, "duplicate_rows": total - distinct}
    )


@dg.asset_check(
    asset=pipeline_event_inbox_record, description="Every stored event names its session."
)
def inbox_correlation_ids_present(duckdb: FoundryDuckDB) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        missing = con.execute(
            "SELECT count(*) FROM pipeline_event_inbox "
            "WHERE correlation_id IS NULL OR trim(correlation_id) = ''"
        ).fetchone()[0]
    return dg.AssetCheckResult(passed=missing == 0, metadata={"missing": missing})


@dg.asset_check(
    asset=pipeline_event_inbox_record,
    description="Dead letters stay a small share of what each subject delivers.",
)
def inbox_dead_letter_share(
    config: DeadLetterShareConfig, duckdb: FoundryDuckDB
) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        rows = con.execute(
            """
            WITH good AS (SELECT subject, count(*) AS n FROM pipeline_event_inbox GROUP BY subject),
                 bad AS (SELECT subject, count(*) AS n FROM pipeline_event_dead_letter
                         GROUP BY subject)
            SELECT coalesce(good.subject, bad.subject) AS subject,
                   coalesce(good.n, 0) AS stored, coalesce(bad.n, 0) AS dead
            FROM good FULL OUTER JOIN bad USING (subject)
            ORDER BY subject
            """
        ).fetchall()
    shares = {
        subject: round(dead / (stored + dead), 4) if stored + dead else 0.0
        for subject, stored, dead in rows
    }
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
