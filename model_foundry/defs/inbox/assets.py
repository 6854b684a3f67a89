"""``pipeline_event_inbox_record``: each subject's NATS events landed in DuckDB exactly once.

The asset is partitioned by subject. A run drains that subject's durable consumer through
:func:`model_foundry.lib.inbox.drain.drain_subject` and returns the :class:`InboxRecord` as a dict,
with the same keys whether it stored a million events or none.
"""

# No `from __future__ import annotations`: Dagster reads the config and resource types of
# decorated functions from their live annotations.

import asyncio
import time
from typing import Any

import dagster as dg
from pydantic import Field

from model_foundry.defs import keys
from model_foundry.defs.inbox.partitions import subject_partitions
from model_foundry.defs.metadata import table_metadata
from model_foundry.defs.resources import FoundryDuckDB, NatsResource
from model_foundry.lib import settings
from model_foundry.lib.hygiene.shown import shown_reason, shown_text
from model_foundry.lib.inbox.drain import DEFAULT_BATCH_SIZE, InboxRecord, drain_subject
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_INBOX
from model_foundry.lib.telemetry import for_run

# Metadata keeps the event log light: the record itself holds up to MAX_RECORDED_IDS ids.
METADATA_EVENTS = 200
PREVIEW_ROWS = 10
PREVIEW_CHARS = 160
INBOX_SUBJECT_TAG = "model_foundry/inbox_subject"


class InboxDrainConfig(dg.Config):
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, description="Messages per fetch/commit.")
    max_events: int | None = Field(
        default=500_000,
        description="Stop after this many messages; the sensor asks for another run if more wait.",
    )
    fetch_timeout_s: float = Field(default=1.0, description="How long an empty fetch waits.")
    checkpoint_s: float = Field(
        default_factory=lambda: float(settings.sensor_interval_s()),
        description=(
            "While the drain keeps finding events, report what it committed as a "
            "materialization of the partition at most this often (default: the sensor "
            "interval), so downstream assets follow a drain that does not end."
        ),
    )


def _preview(duckdb: FoundryDuckDB, record: InboxRecord) -> dg.TableMetadataValue:
    """The newest events' ids and times, and the start of each payload, scrubbed whole before
    it is cut (the event log is no place for a token a session pasted)."""
    columns = ["event_id", "correlation_id", "occurred_at", "payload"]
    rows: list[dg.TableRecord] = []
    ids = record.event_ids[-PREVIEW_ROWS:]
    if ids:
        with duckdb.get_connection() as con:
            placeholders = ",".join("?" * len(ids))
            result = con.execute(
                "SELECT event_id, correlation_id, occurred_at::VARCHAR, payload::VARCHAR "
                f"FROM pipeline_event_inbox WHERE event_id IN ({placeholders}) ORDER BY stream_seq",
                ids,
            ).fetchall()
        rows = [
            dg.TableRecord(
                {
                    "event_id": event_id,
                    "correlation_id": correlation_id,
                    "occurred_at": occurred_at,
                    "payload": shown_text(payload, PREVIEW_CHARS),
                }
            )
            for event_id, correlation_id, occurred_at, payload in result
        ]
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
        "consumers": ", ".join(record.consumers),
        "seconds": record.seconds,
        "events_per_s": round(record.received / record.seconds, 1) if record.seconds else 0.0,
        "dead_letter_share": (
            round(record.dead_lettered / record.received, 4) if record.received else 0.0
        ),
        "dagster/row_count": record.inserted,
        "events": dg.MetadataValue.json(record.events[:METADATA_EVENTS]),
        "correlation_ids": dg.MetadataValue.json(record.correlation_ids[:METADATA_EVENTS]),
        "dead_letter_reasons": dg.MetadataValue.json(record.dead_letter_reasons[:METADATA_EVENTS]),
    }


def checkpoint_metadata(record: InboxRecord, seconds: float) -> dict[str, Any]:
    """What a drain that is still running has committed so far (a checkpoint materialization)."""
    return {
        "checkpoint": True,
        "subject": record.subject,
        "received": record.received,
        "inserted": record.inserted,
        "duplicates": record.duplicates,
        "dead_lettered": record.dead_lettered,
        "batches": record.batches,
        "last_stream_seq": record.last_stream_seq if record.last_stream_seq is not None else -1,
        "seconds": round(seconds, 3),
    }


class Checkpoints:
    """Reports a running drain's commits as materializations of its partition.

    A drain ends only when its queue stays empty for ``fetch_timeout_s``, so while events keep
    coming it may run for minutes, and its final materialization is the only one Dagster would
    otherwise see. Downstream automation reacts to materializations: one every ``every_s``
    with new rows lets the typed tables and summaries follow the events as they are committed.
    The drain has already committed (and acknowledged) everything a checkpoint counts.
    """

    def __init__(self, context: dg.AssetExecutionContext, every_s: float) -> None:
        self._context = context
        self._every_s = every_s
        self._started = time.monotonic()
        self._last_at = self._started
        self._last_inserted = 0

    def __call__(self, record: InboxRecord) -> None:
        now = time.monotonic()
        if now - self._last_at < self._every_s or record.inserted <= self._last_inserted:
            return
        self._last_at = now
        self._last_inserted = record.inserted
        self._context.log_event(
            dg.AssetMaterialization(
                asset_key=self._context.asset_key,
                partition=record.subject,
                description="checkpoint of a drain that is still running",
                metadata=checkpoint_metadata(record, now - self._started),
            )
        )


@dg.asset(
    key=keys.INBOX,
    partitions_def=subject_partitions,
    group_name="inbox",
    kinds={"nats", "duckdb"},
    metadata=table_metadata(PIPELINE_EVENT_INBOX),
    description=(
        "Drains one subject's JetStream consumers into pipeline_event_inbox (exactly once by "
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
    checkpoint = Checkpoints(context, config.checkpoint_s)

    def progress(record: InboxRecord) -> None:
        checkpoint(record)
        if record.batches % 20 == 0:
            context.log.info(
                f"{subject}: {record.received} received, {record.inserted} inserted, "
                f"{record.dead_lettered} dead-lettered so far"
            )

    with for_run(context.run.run_id, context.asset_key.to_user_string()) as telemetry:
        record = asyncio.run(
            drain_subject(
                nats.client(),
                duckdb.database,
                subject,
                batch_size=config.batch_size,
                max_events=config.max_events,
                fetch_timeout_s=config.fetch_timeout_s,
                progress=progress,
                telemetry=telemetry,
            )
        )
    context.log.info(
        f"{subject}: {record.received} received, {record.inserted} inserted, "
        f"{record.duplicates} duplicates, {record.dead_lettered} dead-lettered in {record.seconds}s"
    )
    # A reason may quote the body it refused (a bad occurred_at, say): the metadata and the
    # stored output show it scrubbed; pipeline_event_dead_letter keeps the body verbatim.
    record.dead_letter_reasons = [shown_reason(r) for r in record.dead_letter_reasons]
    metadata = record_metadata(record)
    metadata["checkpoint"] = False
    metadata["preview"] = _preview(duckdb, record)
    metadata.update(telemetry.metadata())
    return dg.Output(record.as_dict(), metadata=metadata)


__all__ = [
    "INBOX_SUBJECT_TAG",
    "Checkpoints",
    "InboxDrainConfig",
    "pipeline_event_inbox_record",
    "record_metadata",
]
