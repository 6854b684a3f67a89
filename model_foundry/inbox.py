"""``pipeline_event_inbox_record``: each subject's NATS events landed in DuckDB exactly once.

The asset is partitioned by subject. A run drains that subject's durable consumer through
:func:`model_foundry.ingest.drain_subject` and returns the :class:`InboxRecord` as a dict,
with the same keys whether it stored a million events or none.
"""

# No `from __future__ import annotations`: Dagster reads the config and resource types of
# decorated functions from their live annotations.

import asyncio
import os
from typing import Any

import dagster as dg
from pydantic import Field

from model_foundry.events import SUBJECTS
from model_foundry.ingest import DEFAULT_BATCH_SIZE, InboxRecord, drain_subject
from model_foundry.nats_resource import NatsResource
from model_foundry.resources import FoundryDuckDB
from model_foundry.storage import INBOX_SCHEMA

subject_partitions = dg.StaticPartitionsDefinition(list(SUBJECTS))

# Metadata keeps the event log light: the record itself holds up to MAX_RECORDED_IDS ids.
METADATA_EVENTS = 200
PREVIEW_ROWS = 10
INBOX_SUBJECT_TAG = "model_foundry/inbox_subject"


class InboxDrainConfig(dg.Config):
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, description="Messages per fetch/commit.")
    max_events: int | None = Field(
        default=500_000,
        description="Stop after this many messages; the sensor asks for another run if more wait.",
    )
    fetch_timeout_s: float = Field(default=1.0, description="How long an empty fetch waits.")


def _preview(duckdb: FoundryDuckDB, record: InboxRecord) -> dg.TableMetadataValue:
    columns = ["event_id", "correlation_id", "occurred_at", "payload"]
    rows: list[dg.TableRecord] = []
    ids = record.event_ids[-PREVIEW_ROWS:]
    if ids:
        with duckdb.get_connection() as con:
            placeholders = ",".join("?" * len(ids))
            result = con.execute(
                "SELECT event_id, correlation_id, occurred_at::VARCHAR, "
                "left(payload::VARCHAR, 160) "
                f"FROM pipeline_event_inbox WHERE event_id IN ({placeholders}) ORDER BY stream_seq",
                ids,
            ).fetchall()
        rows = [dg.TableRecord(dict(zip(columns, row, strict=True))) for row in result]
    return dg.MetadataValue.table(
        records=rows,
        schema=dg.TableSchema(columns=[dg.TableColumn(c, "string") for c in columns]),
    )


def record_metadata(record: InboxRecord) -> dict[str, Any]:
    return {
        "subject": record.subject,
        "received": record.received,
        "inserted": record.inserted,
        "duplicates": record.duplicates,
        "conflicts": record.conflicts,
        "dead_lettered": record.dead_lettered,
        "batches": record.batches,
        "first_stream_seq": record.first_stream_seq if record.first_stream_seq is not None else -1,
        "last_stream_seq": record.last_stream_seq if record.last_stream_seq is not None else -1,
        "capped": record.capped,
        "seconds": record.seconds,
        "events_per_s": round(record.received / record.seconds, 1) if record.seconds else 0.0,
        "dagster/row_count": record.inserted,
        "events": dg.MetadataValue.json(record.events[:METADATA_EVENTS]),
        "correlation_ids": dg.MetadataValue.json(record.correlation_ids[:METADATA_EVENTS]),
        "dead_letter_reasons": dg.MetadataValue.json(record.dead_letter_reasons[:METADATA_EVENTS]),
    }


@dg.asset(
    partitions_def=subject_partitions,
    group_name="inbox",
    kinds={"nats", "duckdb"},
    description=(
        "Drains one subject's JetStream consumer into pipeline_event_inbox (exactly once by "
        "event_id) and pipeline_event_dead_letter; returns the inbox record, also when empty."
    ),
)
def pipeline_event_inbox_record(
    context: dg.AssetExecutionContext,
    config: InboxDrainConfig,
    nats: NatsResource,
    duckdb: FoundryDuckDB,
) -> dg.Output[dict]:
    subject = context.partition_key

    def progress(record: InboxRecord) -> None:
        if record.batches % 20 == 0:
            context.log.info(
                f"{subject}: {record.received} received, {record.inserted} inserted, "
                f"{record.dead_lettered} dead-lettered so far"
            )

    record = asyncio.run(
        drain_subject(
            nats,
            duckdb.database,
            subject,
            batch_size=config.batch_size,
            max_events=config.max_events,
            fetch_timeout_s=config.fetch_timeout_s,
            progress=progress,
        )
    )
    context.log.info(
        f"{subject}: {record.received} received, {record.inserted} inserted, "
        f"{record.duplicates} duplicates, {record.dead_lettered} dead-lettered in {record.seconds}s"
    )
    metadata = record_metadata(record)
    metadata["preview"] = _preview(duckdb, record)
    return dg.Output(record.as_dict(), metadata=metadata)


def _dead_letter_max_share() -> float:
    return float(os.environ.get("MODEL_FOUNDRY_DEAD_LETTER_MAX_SHARE", "0.05"))


class DeadLetterShareConfig(dg.Config):
    max_share: float = Field(
        default_factory=_dead_letter_max_share,
        description="Highest acceptable dead letters / all delivered messages, per subject.",
    )


def _ensure_tables(duckdb: FoundryDuckDB) -> None:
    with duckdb.get_connection() as con:
        for statement in INBOX_SCHEMA:
            con.execute(statement)


@dg.asset_check(asset=pipeline_event_inbox_record, description="No event_id is stored twice.")
def inbox_event_ids_unique(duckdb: FoundryDuckDB) -> dg.AssetCheckResult:
    _ensure_tables(duckdb)
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
    _ensure_tables(duckdb)
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
    _ensure_tables(duckdb)
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


inbox_job = dg.define_asset_job(
    "pipeline_event_inbox_job",
    selection=dg.AssetSelection.assets(pipeline_event_inbox_record),
    description="Drain one subject's events into DuckDB (launched by the inbox sensors).",
)

inbox_assets = [pipeline_event_inbox_record]
inbox_checks = [inbox_event_ids_unique, inbox_correlation_ids_present, inbox_dead_letter_share]
inbox_jobs = [inbox_job]

__all__ = [
    "INBOX_SUBJECT_TAG",
    "InboxDrainConfig",
    "inbox_assets",
    "inbox_checks",
    "inbox_job",
    "inbox_jobs",
    "pipeline_event_inbox_record",
    "subject_partitions",
]
