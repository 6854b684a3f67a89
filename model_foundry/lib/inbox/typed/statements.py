"""The SQL of the typed refresh (``lib/inbox/typed/refresh.py``), as pure functions.

Each statement that adds rows takes ``{seen}``, the check against the table's stored rows
in the span's time ranges (``lib/inbox/typed/seen.py``); its parameters are the span's,
then the ranges'.
"""

from __future__ import annotations

from model_foundry.lib.events import CHAT_PERSIST, FLOW_LINEAGE, SEMANTIC_SEARCH, TOOL_CALL
from model_foundry.lib.inbox import commit_spans


def _new_events(subject: str, table: str, seen: str, extra: str = "") -> str:
    """The span's inbox rows of ``subject`` that ``table`` does not hold yet, one per id."""
    return f"""
    SELECT i.* FROM pipeline_event_inbox i
    WHERE {commit_spans.IN_SPAN} AND i.subject = '{subject}' {extra}
      AND NOT EXISTS (
          SELECT 1 FROM {table} t WHERE ({seen}) AND t.event_id = i.event_id
      )
    QUALIFY row_number() OVER (PARTITION BY i.event_id ORDER BY i.commit_seq, i.stream_seq) = 1
    """


def _chat_rows(seen: str) -> str:
    return f"""
WITH new_events AS ({_new_events(CHAT_PERSIST, "chat_messages", seen)}),
exploded AS (
    SELECT event_id, correlation_id, occurred_at, payload,
           unnest(json_extract(payload, '$.messages[*]')) AS m,
           generate_subscripts(json_extract(payload, '$.messages[*]'), 1) - 1 AS message_index
    FROM new_events
), chat_rows AS (
    SELECT event_id, message_index::INTEGER AS message_index, correlation_id, occurred_at,
           m->>'$.role' AS role,
           -- Content is a string, null, or a list of parts ({{"type": "text", "text": ...}}).
           CASE json_type(m, '$.content')
               WHEN 'ARRAY' THEN array_to_string(json_extract_string(m, '$.content[*].text'), '')
               ELSE m->>'$.content'
           END AS content,
           payload->>'$.model' AS model,
           payload->>'$.slot' AS slot,
           TRY_CAST(payload->>'$.usage.prompt_tokens' AS BIGINT) AS prompt_tokens,
           TRY_CAST(payload->>'$.usage.completion_tokens' AS BIGINT) AS completion_tokens
    FROM exploded
)"""


# The new messages' figures per session, taken before they are inserted (after it, the check
# would find them stored). Usage is per event, repeated on each of its messages: count it once.
def session_delta(seen: str) -> str:
    return f"""
CREATE OR REPLACE TEMP TABLE _chat_session_delta AS
{_chat_rows(seen)}
SELECT correlation_id,
       min(occurred_at) AS first_at,
       max(occurred_at) AS last_at,
       count(DISTINCT event_id) AS chat_events,
       count(*) AS messages,
       count(*) FILTER (WHERE role = 'user') AS user_messages,
       count(*) FILTER (WHERE role = 'assistant') AS assistant_messages,
       list_distinct(list(model)) AS models,
       list_distinct(list(slot)) AS slots,
       sum(prompt_tokens) FILTER (WHERE message_index = 0) AS prompt_tokens,
       sum(completion_tokens) FILTER (WHERE message_index = 0) AS completion_tokens
FROM chat_rows
GROUP BY correlation_id
"""


# Every insert is in occurred_at order: the window's QUALIFY and the unnest leave rows in any
# order, and a big catch-up inserted so leaves row groups that each span all of its time, so
# the min-max index could skip none of them for the checks and the summaries' reads.
_IN_TIME_ORDER = "ORDER BY occurred_at, event_id"


def insert_chat_messages(seen: str) -> str:
    return (
        f"INSERT INTO chat_messages BY NAME {_chat_rows(seen)} "
        f"SELECT * FROM chat_rows {_IN_TIME_ORDER}, message_index"
    )


def _summed(column: str) -> str:
    """Stored plus new, NULL while neither has a figure (as ``sum`` over no value is)."""
    return (
        f"{column} = CASE WHEN s.{column} IS NULL AND d.{column} IS NULL THEN NULL "
        f"ELSE coalesce(s.{column}, 0) + coalesce(d.{column}, 0) END"
    )


# Reads chat_sessions (one row per session, far fewer than events) to find the touched ones.
MERGE_CHAT_SESSIONS = f"""
UPDATE chat_sessions s SET
    first_at = least(s.first_at, d.first_at),
    last_at = greatest(s.last_at, d.last_at),
    {_summed("chat_events")},
    {_summed("messages")},
    {_summed("user_messages")},
    {_summed("assistant_messages")},
    models = list_sort(list_distinct(list_concat(s.models, d.models))),
    slots = list_sort(list_distinct(list_concat(s.slots, d.slots))),
    {_summed("prompt_tokens")},
    {_summed("completion_tokens")},
    refreshed_at = now()
FROM _chat_session_delta d
WHERE s.correlation_id = d.correlation_id
"""

INSERT_CHAT_SESSIONS = """
INSERT INTO chat_sessions BY NAME
SELECT d.* REPLACE (list_sort(d.models) AS models, list_sort(d.slots) AS slots),
       now() AS refreshed_at
FROM _chat_session_delta d
WHERE NOT EXISTS (SELECT 1 FROM chat_sessions s WHERE s.correlation_id = d.correlation_id)
"""


# The touched sessions wait for a summary (lib/tables/summaries.py), in this transaction: a
# queued one gets its new times and the commit that queued it again, keeping queued_at.
REQUEUE_SESSIONS = """
UPDATE session_summary_queue q SET first_at = s.first_at, last_at = s.last_at, commit_seq = ?
FROM chat_sessions s
WHERE s.correlation_id = q.correlation_id
  AND q.correlation_id IN (SELECT correlation_id FROM _chat_session_delta)
"""

QUEUE_SESSIONS = """
INSERT INTO session_summary_queue BY NAME
SELECT s.correlation_id, s.first_at, s.last_at, ?::BIGINT AS commit_seq
FROM chat_sessions s
WHERE s.correlation_id IN (SELECT correlation_id FROM _chat_session_delta)
  AND NOT EXISTS (
      SELECT 1 FROM session_summary_queue q WHERE q.correlation_id = s.correlation_id
  )
"""


def insert_tool_calls(seen: str) -> str:
    return f"""
INSERT INTO tool_calls BY NAME
SELECT i.event_id, i.correlation_id, i.occurred_at,
       i.payload->>'$.tool' AS tool,
       i.payload->>'$.status' AS status,
       coalesce(lower(i.payload->>'$.status') NOT IN ('error', 'failed', 'failure'), true) AS ok,
       TRY_CAST(i.payload->>'$.duration_ms' AS DOUBLE) AS duration_ms,
       i.payload->'$.arguments' AS arguments,
       CASE json_type(i.payload, '$.result')
           WHEN 'VARCHAR' THEN i.payload->>'$.result'
           ELSE (i.payload->'$.result')::VARCHAR
       END AS result
FROM ({_new_events(TOOL_CALL, "tool_calls", seen)}) i
{_IN_TIME_ORDER}
"""


def insert_flow_nodes(seen: str) -> str:
    kind = "AND i.payload->>'$.kind' = 'node'"
    return f"""
INSERT INTO flow_nodes BY NAME
SELECT i.event_id, i.correlation_id, i.occurred_at,
       i.payload->>'$.node_id' AS node_id, i.payload->>'$.label' AS label,
       i.payload->>'$.slot' AS slot, i.payload->>'$.role' AS role,
       i.payload->>'$.model' AS model
FROM ({_new_events(FLOW_LINEAGE, "flow_nodes", seen, kind)}) i
{_IN_TIME_ORDER}
"""


def insert_flow_edges(seen: str) -> str:
    kind = "AND i.payload->>'$.kind' = 'edge'"
    return f"""
INSERT INTO flow_edges BY NAME
SELECT i.event_id, i.correlation_id, i.occurred_at,
       i.payload->>'$.source' AS source, i.payload->>'$.target' AS target
FROM ({_new_events(FLOW_LINEAGE, "flow_edges", seen, kind)}) i
{_IN_TIME_ORDER}
"""


def insert_semantic_searches(seen: str) -> str:
    return f"""
INSERT INTO semantic_searches BY NAME
SELECT i.event_id, i.correlation_id, i.occurred_at,
       i.payload->>'$.query' AS query,
       coalesce(json_array_length(i.payload, '$.results'), 0)::INTEGER AS result_count,
       i.payload->>'$.results[0].path' AS top_path,
       TRY_CAST(i.payload->>'$.results[0].score' AS DOUBLE) AS top_score,
       i.payload->'$.results' AS results
FROM ({_new_events(SEMANTIC_SEARCH, "semantic_searches", seen)}) i
{_IN_TIME_ORDER}
"""


__all__ = [
    "INSERT_CHAT_SESSIONS",
    "MERGE_CHAT_SESSIONS",
    "QUEUE_SESSIONS",
    "REQUEUE_SESSIONS",
    "insert_chat_messages",
    "insert_flow_edges",
    "insert_flow_nodes",
    "insert_semantic_searches",
    "insert_tool_calls",
    "session_delta",
]
