"""Views for ad-hoc SQL: per-session overview, per-slot throughput and prompt-cache use,
dataset statistics.

Views cost nothing to keep current: they read the tables the assets maintain, at query time.
"""

from __future__ import annotations

from model_foundry.lib.tables.base import View

# The newest summary of each session (a session is re-summarised when new chat arrives).
SESSION_SUMMARIES_LATEST = View(
    "session_summaries_latest",
    """
    SELECT * FROM session_summaries
    QUALIFY row_number() OVER (
        PARTITION BY correlation_id ORDER BY chat_events DESC, created_at DESC
    ) = 1
    """,
)

SESSION_OVERVIEW = View(
    "session_overview",
    """
    WITH events AS (
        SELECT correlation_id,
               count(*) AS events,
               count(*) FILTER (WHERE subject = 'llm.chat.persist') AS chat_events,
               count(*) FILTER (WHERE subject = 'llm.tool_call') AS tool_call_events,
               count(*) FILTER (WHERE subject = 'llm.flow.lineage') AS lineage_events,
               count(*) FILTER (WHERE subject = 'obsidian.semantic_search') AS searches,
               min(occurred_at) AS first_at,
               max(occurred_at) AS last_at
        FROM pipeline_event_inbox
        GROUP BY correlation_id
    ),
    tools AS (
        SELECT correlation_id, count(*) FILTER (WHERE NOT ok) AS tool_errors
        FROM tool_calls GROUP BY correlation_id
    )
    SELECT e.correlation_id, e.first_at, e.last_at, e.events, e.chat_events,
           coalesce(c.messages, 0) AS messages, e.tool_call_events,
           coalesce(t.tool_errors, 0) AS tool_errors, e.lineage_events, e.searches,
           s.language AS summary_language, s.summary, s.chat_events AS summarised_events,
           tr.translation, s.slot AS summary_slot, s.model AS summary_model
    FROM events e
    LEFT JOIN chat_sessions c USING (correlation_id)
    LEFT JOIN tools t USING (correlation_id)
    LEFT JOIN session_summaries_latest s USING (correlation_id)
    LEFT JOIN session_summary_translations tr
        ON tr.summary_key = s.request_key AND tr.correlation_id = s.correlation_id
    """,
)

TOOL_CALL_STATS = View(
    "tool_call_stats",
    """
    SELECT tool,
           count(*) AS calls,
           count(*) FILTER (WHERE NOT ok) AS errors,
           round(count(*) FILTER (WHERE NOT ok) / count(*), 4) AS error_share,
           quantile_cont(duration_ms, 0.5) AS duration_p50_ms,
           quantile_cont(duration_ms, 0.95) AS duration_p95_ms,
           count(DISTINCT correlation_id) AS sessions
    FROM tool_calls
    GROUP BY tool
    """,
)

# The newest snapshot the slot_throughput asset wrote, one row per slot and model.
SLOT_THROUGHPUT_LATEST = View(
    "slot_throughput_latest",
    """
    SELECT * FROM slot_throughput
    QUALIFY computed_at = max(computed_at) OVER ()
    """,
)

# Live per-slot numbers straight from the completions, per hour, for when the snapshot is
# not fresh enough.
SLOT_THROUGHPUT_HOURLY = View(
    "slot_throughput_hourly",
    """
    SELECT date_trunc('hour', recorded_at) AS hour, slot, model,
           count(*) AS attempts,
           count(*) FILTER (WHERE status <> 'ok') AS errors,
           round(avg(prompt_tps), 1) AS prompt_tps,
           round(avg(gen_tps), 1) AS gen_tps,
           quantile_cont(ttft_s, 0.5) AS ttft_p50_s,
           quantile_cont(latency_s, 0.5) AS latency_p50_s,
           quantile_cont(latency_s, 0.95) AS latency_p95_s
    FROM llm_completions
    GROUP BY ALL
    """,
)

# What the prompt caches saved, per slot and task: prefill tokens the server computed per token
# it generated, and the share of prompt tokens it reused. Only attempts whose server said how
# many it reused count (``reported``); the others are neither a hit nor a miss.
SLOT_PREFILL = View(
    "slot_prefill",
    """
    WITH known AS (
        SELECT slot, task, prompt_tokens, cached_prompt_tokens, completion_tokens,
               cached_prompt_tokens IS NOT NULL AND prompt_tokens IS NOT NULL
                   AND completion_tokens IS NOT NULL AS reported
        FROM llm_completions
    )
    SELECT slot, task,
           count(*) AS attempts,
           count(*) FILTER (WHERE reported) AS reported,
           sum(prompt_tokens) FILTER (WHERE reported) AS prompt_tokens,
           sum(cached_prompt_tokens) FILTER (WHERE reported) AS cached_prompt_tokens,
           sum(completion_tokens) FILTER (WHERE reported) AS completion_tokens,
           round((sum(prompt_tokens) FILTER (WHERE reported)
                  - sum(cached_prompt_tokens) FILTER (WHERE reported))
                 / nullif(sum(completion_tokens) FILTER (WHERE reported), 0), 3)
               AS prefill_per_generated_token,
           round(sum(cached_prompt_tokens) FILTER (WHERE reported)
                 / nullif(sum(prompt_tokens) FILTER (WHERE reported), 0), 4) AS cache_hit_share
    FROM known
    GROUP BY slot, task
    """,
)

DATASET_STATS = View(
    "dataset_stats",
    """
    SELECT dataset, version, role, slot, model,
           count(*) AS samples,
           count(DISTINCT prompt_id) AS prompts,
           count(*) FILTER (WHERE is_empty) AS empty,
           count(*) FILTER (WHERE is_truncated) AS truncated,
           round(avg(prompt_tokens), 1) AS avg_prompt_tokens,
           round(avg(completion_tokens), 1) AS avg_completion_tokens,
           min(created_at) AS first_at,
           max(created_at) AS last_at
    FROM dataset_samples
    GROUP BY ALL
    """,
)

__all__ = [
    "DATASET_STATS",
    "SESSION_OVERVIEW",
    "SESSION_SUMMARIES_LATEST",
    "SLOT_PREFILL",
    "SLOT_THROUGHPUT_HOURLY",
    "SLOT_THROUGHPUT_LATEST",
    "TOOL_CALL_STATS",
]
