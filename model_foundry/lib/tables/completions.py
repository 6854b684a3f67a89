"""``llm_completions``: one row per attempt at a request, the completions store's table.

No key and no index: ``attempt_id`` is a new uuid4 per attempt, written once, so nothing
needs checking on insert; the store finds a request's answer by scanning ``key_prefix``, the
first 60 bits of the request key as one BIGINT, and only then ``request_key`` of the rows
that match (lib/llm/store.py; figures in docs/benchmarks.md). An index would grow in
memory with the table.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table


@dataclass(frozen=True)
class CompletionRow:
    """One attempt. ``request_key`` names the request across runs; ``params`` (the output
    parameters) and ``request`` (the rendered request) are JSON text kept beside it so a key
    can always be explained. ``planned_model`` is the model the request was planned for."""

    attempt_id: str
    request_key: str
    task: str
    role: str
    slot: str
    model: str
    runtime: str
    status: str
    attempt: int
    will_retry: bool | None
    error_class: str | None
    error: str | None
    http_status: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    ttft_s: float | None
    prompt_tps: float | None
    gen_tps: float | None
    finish_reason: str | None
    content: str | None
    reasoning: str | None
    planned_model: str | None
    params: str | None
    request: str | None
    run_id: str | None
    started_at: datetime | None
    recorded_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)
    # key_prefix(request_key): what the store's lookup scans (8 bytes a row, not 64).
    key_prefix: int | None = None
    # Of prompt_tokens, those the server took from its prompt cache (llama.cpp cache_n, vLLM
    # cached_tokens); NULL where the server did not say. Last, where ALTER TABLE puts it in
    # a file from before the column, so both files have one layout.
    cached_prompt_tokens: int | None = None


LLM_COMPLETIONS: Table[CompletionRow] = Table(
    "llm_completions",
    CompletionRow,
    """
    CREATE TABLE IF NOT EXISTS llm_completions (
        attempt_id VARCHAR NOT NULL,
        request_key VARCHAR NOT NULL,
        task VARCHAR NOT NULL,
        role VARCHAR NOT NULL,
        slot VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        runtime VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        will_retry BOOLEAN,
        error_class VARCHAR,
        error VARCHAR,
        http_status INTEGER,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        latency_s DOUBLE,
        ttft_s DOUBLE,
        prompt_tps DOUBLE,
        gen_tps DOUBLE,
        finish_reason VARCHAR,
        content VARCHAR,
        reasoning VARCHAR,
        planned_model VARCHAR,
        params JSON,
        request JSON,
        run_id VARCHAR,
        started_at TIMESTAMPTZ,
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        key_prefix BIGINT NOT NULL,
        cached_prompt_tokens BIGINT
    )
    """,
)

_PREFIX_DIGITS = 15  # 60 bits: a positive BIGINT
_HEX = re.compile(f"[0-9a-f]{{{_PREFIX_DIGITS}}}")


def key_prefix(request_key: str) -> int:
    """The first 15 hex digits of a request key (a sha256 in hex) as a number; a key of
    another shape is hashed first. :data:`KEY_PREFIX_SQL` is the same in SQL."""
    head = request_key[:_PREFIX_DIGITS]
    if not _HEX.fullmatch(head):
        head = hashlib.sha256(request_key.encode("utf-8")).hexdigest()[:_PREFIX_DIGITS]
    return int(head, 16)


# key_prefix(request_key) in SQL, for rows written before the column (registry.py).
KEY_PREFIX_SQL = f"""
CASE WHEN regexp_full_match(left(request_key, {_PREFIX_DIGITS}), '[0-9a-f]{{{_PREFIX_DIGITS}}}')
     THEN ('0x' || left(request_key, {_PREFIX_DIGITS}))::BIGINT
     ELSE ('0x' || left(sha256(request_key), {_PREFIX_DIGITS}))::BIGINT END
"""

__all__ = ["KEY_PREFIX_SQL", "LLM_COMPLETIONS", "CompletionRow", "key_prefix"]
