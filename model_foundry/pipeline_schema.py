"""DDL of the downstream tables: typed inbox tables, completions, summaries, datasets.

Pure SQL text. Every writer passes :data:`PIPELINE_SCHEMA` to ``storage.connect``, which runs
it once per process and file, so a fresh DuckDB file gets every table and view on first use
and a person's ad-hoc query never finds one missing.
"""

from __future__ import annotations

from model_foundry.storage import INBOX_SCHEMA
from model_foundry.views import VIEWS

INBOX_TABLES: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS chat_messages (
        event_id VARCHAR NOT NULL,
        message_index INTEGER NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        role VARCHAR,
        content VARCHAR,
        model VARCHAR,
        slot VARCHAR,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        PRIMARY KEY (event_id, message_index)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS chat_sessions (
        correlation_id VARCHAR PRIMARY KEY,
        first_at TIMESTAMPTZ,
        last_at TIMESTAMPTZ,
        chat_events BIGINT,
        messages BIGINT,
        user_messages BIGINT,
        assistant_messages BIGINT,
        models VARCHAR[],
        slots VARCHAR[],
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        refreshed_at TIMESTAMPTZ
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS tool_calls (
        event_id VARCHAR PRIMARY KEY,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        tool VARCHAR NOT NULL,
        status VARCHAR,
        ok BOOLEAN,
        duration_ms DOUBLE,
        arguments JSON,
        result VARCHAR
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS flow_nodes (
        event_id VARCHAR PRIMARY KEY,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        node_id VARCHAR NOT NULL,
        label VARCHAR
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS flow_edges (
        event_id VARCHAR PRIMARY KEY,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        source VARCHAR NOT NULL,
        target VARCHAR NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS semantic_searches (
        event_id VARCHAR PRIMARY KEY,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        query VARCHAR NOT NULL,
        result_count INTEGER,
        top_path VARCHAR,
        top_score DOUBLE,
        results JSON
    )
    """,
)

COMPLETION_TABLES: tuple[str, ...] = (
    # One row per attempt. request_key identifies the request across runs; params and the
    # rendered request are stored beside it so a key can always be explained.
    """
    CREATE TABLE IF NOT EXISTS llm_completions (
        attempt_id VARCHAR PRIMARY KEY,
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
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX IF NOT EXISTS llm_completions_request_key ON llm_completions (request_key)",
)

SUMMARY_TABLES: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS session_summaries (
        request_key VARCHAR PRIMARY KEY,
        correlation_id VARCHAR NOT NULL,
        chat_events BIGINT NOT NULL,
        event_ids JSON NOT NULL,
        first_event_at TIMESTAMPTZ,
        last_event_at TIMESTAMPTZ,
        language VARCHAR NOT NULL,
        summary VARCHAR NOT NULL,
        slot VARCHAR,
        model VARCHAR,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        latency_s DOUBLE,
        gen_tps DOUBLE,
        run_id VARCHAR,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS session_summary_translations (
        summary_key VARCHAR PRIMARY KEY,
        correlation_id VARCHAR NOT NULL,
        request_key VARCHAR NOT NULL,
        source_lang VARCHAR NOT NULL,
        target_lang VARCHAR NOT NULL,
        source_text VARCHAR NOT NULL,
        translation VARCHAR NOT NULL,
        slot VARCHAR,
        model VARCHAR,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        latency_s DOUBLE,
        gen_tps DOUBLE,
        run_id VARCHAR,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

THROUGHPUT_TABLES: tuple[str, ...] = (
    # Append-only snapshots: each materialization adds one row per slot and model, so the
    # history of how the slots performed stays queryable.
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

DATASET_TABLES: tuple[str, ...] = (
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
        is_empty BOOLEAN NOT NULL,
        is_truncated BOOLEAN NOT NULL,
        run_id VARCHAR,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (dataset, version, request_key)
    )
    """,
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

PIPELINE_TABLES: tuple[str, ...] = (
    *INBOX_TABLES,
    *COMPLETION_TABLES,
    *SUMMARY_TABLES,
    *THROUGHPUT_TABLES,
    *DATASET_TABLES,
)

# Inbox tables first (the views read them), then ours, then the views over all of them.
PIPELINE_SCHEMA: tuple[str, ...] = (*INBOX_SCHEMA, *PIPELINE_TABLES, *VIEWS)

__all__ = [
    "COMPLETION_TABLES",
    "DATASET_TABLES",
    "INBOX_TABLES",
    "PIPELINE_SCHEMA",
    "PIPELINE_TABLES",
    "SUMMARY_TABLES",
    "THROUGHPUT_TABLES",
]
