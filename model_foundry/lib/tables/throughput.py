"""``slot_throughput``: append-only snapshots of how each slot and model performed.

Each materialization adds one row per slot and model, so the history stays queryable.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from model_foundry.lib.tables.base import Table


@dataclass(frozen=True)
class ThroughputRow:
    """One slot and model over the window ``window_start`` .. ``window_end``."""

    computed_at: datetime
    window_start: datetime
    window_end: datetime
    slot: str
    model: str
    runtime: str | None
    attempts: int | None
    ok: int | None
    errors: int | None
    error_share: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    prompt_tps: float | None
    gen_tps: float | None
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    latency_p50_s: float | None
    latency_p95_s: float | None
    last_completion_at: datetime | None


SLOT_THROUGHPUT: Table[ThroughputRow] = Table(
    "slot_throughput",
    ThroughputRow,
    """
    CREATE TABLE IF NOT EXISTS slot_throughput (
        computed_at TIMESTAMPTZ NOT NULL,
        window_start TIMESTAMPTZ NOT NULL,
        window_end TIMESTAMPTZ NOT NULL,
        slot VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        runtime VARCHAR,
        attempts BIGINT,
        ok BIGINT,
        errors BIGINT,
        error_share DOUBLE,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        prompt_tps DOUBLE,
        gen_tps DOUBLE,
        ttft_p50_s DOUBLE,
        ttft_p95_s DOUBLE,
        latency_p50_s DOUBLE,
        latency_p95_s DOUBLE,
        last_completion_at TIMESTAMPTZ,
        PRIMARY KEY (computed_at, slot, model)
    )
    """,
)

__all__ = ["SLOT_THROUGHPUT", "ThroughputRow"]
