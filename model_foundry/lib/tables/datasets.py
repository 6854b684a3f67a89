"""``dataset_samples`` (one answer per prompt, role and sample) and ``dataset_exports``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table


@dataclass(frozen=True)
class DatasetSampleRow:
    """One sample of a dataset version. ``messages`` and ``params`` are JSON text.
    ``is_empty`` is always false since empty answers became failed requests; it is kept so
    existing tables and exports keep their schema."""

    dataset: str
    version: str
    request_key: str
    prompt_id: str
    source: str
    role: str
    sample_index: int
    messages: str
    prompt: str | None
    response: str | None
    reasoning: str | None
    slot: str | None
    model: str | None
    params: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    is_empty: bool
    is_truncated: bool
    run_id: str | None
    created_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


@dataclass(frozen=True)
class DatasetExportRow:
    """The newest export of a dataset version: where it was written and how many rows."""

    dataset: str
    version: str
    path: str
    rows: int
    jsonl_rows: int
    exported_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


DATASET_SAMPLES: Table[DatasetSampleRow] = Table(
    "dataset_samples",
    DatasetSampleRow,
    """
    CREATE TABLE IF NOT EXISTS dataset_samples (
        dataset VARCHAR NOT NULL,
        version VARCHAR NOT NULL,
        request_key VARCHAR NOT NULL,
        prompt_id VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        role VARCHAR NOT NULL,
        sample_index INTEGER NOT NULL,
        messages JSON NOT NULL,
        prompt VARCHAR,
        response VARCHAR,
        reasoning VARCHAR,
        slot VARCHAR,
        model VARCHAR,
        params JSON,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        finish_reason VARCHAR,
        -- Always false since empty answers became failed requests (EmptyAnswer) that are
        -- never written as samples; kept so existing tables and exports keep their schema.
        is_empty BOOLEAN NOT NULL,
        is_truncated BOOLEAN NOT NULL,
        run_id VARCHAR,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

DATASET_EXPORTS: Table[DatasetExportRow] = Table(
    "dataset_exports",
    DatasetExportRow,
    """
    CREATE TABLE IF NOT EXISTS dataset_exports (
        dataset VARCHAR NOT NULL,
        version VARCHAR NOT NULL,
        path VARCHAR NOT NULL,
        rows BIGINT NOT NULL,
        jsonl_rows BIGINT NOT NULL,
        exported_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (dataset, version)
    )
    """,
)

__all__ = ["DATASET_EXPORTS", "DATASET_SAMPLES", "DatasetExportRow", "DatasetSampleRow"]
