"""Typed tables from the inbox, refreshed incrementally in DuckDB SQL.

``chat_messages`` (one row per message), ``chat_sessions`` (one row per session, rebuilt for
the sessions that got new messages), ``tool_calls``, ``flow_nodes`` / ``flow_edges`` (the
lineage graph per session) and ``semantic_searches``. Each refresh selects only inbox events
not yet in its table (an anti-join on ``event_id``), all in one short transaction, so a
rerun with nothing new is a cheap zero-count success. The tables' shapes are in
``lib/tables/typed.py``.
"""

# No `from __future__ import annotations`: Dagster reads the resource types of decorated
# functions from their live annotations.

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.events import CHAT_PERSIST, FLOW_LINEAGE, SEMANTIC_SEARCH, TOOL_CALL

# ---------------------------------------------------------------------------------------------
# Pure: the SQL of each refresh. Each statement takes only events missing from its table.

INSERT_CHAT_MESSAGES = f"""
INSERT INTO chat_messages BY NAME
WITH new_events AS (
    SELECT i.event_id, i.correlation_id, i.occurred_at, i.payload
    FROM pipeline_event_inbox i
    WHERE i.subject = '{CHAT_PERSIST}'
      AND NOT EXISTS (SELECT 1 FROM chat_messages c WHERE c.event_id = i.event_id)
), exploded AS (
    SELECT event_id, correlation_id, occurred_at, payload,
           unnest(json_extract(payload, '$.messages[*]')) AS m,
           generate_subscripts(json_extract(payload, '$.messages[*]'), 1) - 1 AS message_index
    FROM new_events
)
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
ON CONFLICT DO NOTHING
RETURNING correlation_id
"""

REFRESH_CHAT_SESSIONS = """
INSERT OR REPLACE INTO chat_sessions BY NAME
SELECT correlation_id,
       min(occurred_at) AS first_at,
       max(occurred_at) AS last_at,
       count(DISTINCT event_id) AS chat_events,
       count(*) AS messages,
       count(*) FILTER (WHERE role = 'user') AS user_messages,
       count(*) FILTER (WHERE role = 'assistant') AS assistant_messages,
       list_sort(list_distinct(list(model))) AS models,
       list_sort(list_distinct(list(slot))) AS slots,
       -- Usage is per event, repeated on each of its messages: count it once.
       sum(prompt_tokens) FILTER (WHERE message_index = 0) AS prompt_tokens,
       sum(completion_tokens) FILTER (WHERE message_index = 0) AS completion_tokens,
       now() AS refreshed_at
FROM chat_messages
WHERE correlation_id IN (SELECT unnest(?::VARCHAR[]))
GROUP BY correlation_id
"""

INSERT_TOOL_CALLS = f"""
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
FROM pipeline_event_inbox i
WHERE i.subject = '{TOOL_CALL}'
  AND NOT EXISTS (SELECT 1 FROM tool_calls t WHERE t.event_id = i.event_id)
ON CONFLICT DO NOTHING
"""

INSERT_FLOW_NODES = f"""
INSERT INTO flow_nodes BY NAME
SELECT i.event_id, i.correlation_id, i.occurred_at,
       i.payload->>'$.node_id' AS node_id, i.payload->>'$.label' AS label,
       i.payload->>'$.slot' AS slot, i.payload->>'$.role' AS role,
       i.payload->>'$.model' AS model
FROM pipeline_event_inbox i
WHERE i.subject = '{FLOW_LINEAGE}' AND i.payload->>'$.kind' = 'node'
  AND NOT EXISTS (SELECT 1 FROM flow_nodes n WHERE n.event_id = i.event_id)
ON CONFLICT DO NOTHING
"""

INSERT_FLOW_EDGES = f"""
INSERT INTO flow_edges BY NAME
SELECT i.event_id, i.correlation_id, i.occurred_at,
       i.payload->>'$.source' AS source, i.payload->>'$.target' AS target
FROM pipeline_event_inbox i
WHERE i.subject = '{FLOW_LINEAGE}' AND i.payload->>'$.kind' = 'edge'
  AND NOT EXISTS (SELECT 1 FROM flow_edges e WHERE e.event_id = i.event_id)
ON CONFLICT DO NOTHING
"""

INSERT_SEMANTIC_SEARCHES = f"""
INSERT INTO semantic_searches BY NAME
SELECT i.event_id, i.correlation_id, i.occurred_at,
       i.payload->>'$.query' AS query,
       coalesce(json_array_length(i.payload, '$.results'), 0)::INTEGER AS result_count,
       i.payload->>'$.results[0].path' AS top_path,
       TRY_CAST(i.payload->>'$.results[0].score' AS DOUBLE) AS top_score,
       i.payload->'$.results' AS results
FROM pipeline_event_inbox i
WHERE i.subject = '{SEMANTIC_SEARCH}'
  AND NOT EXISTS (SELECT 1 FROM semantic_searches s WHERE s.event_id = i.event_id)
ON CONFLICT DO NOTHING
"""

TABLE_COUNTS = {
    "chat_messages": "SELECT count(*) FROM chat_messages",
    "chat_sessions": "SELECT count(*) FROM chat_sessions",
    "tool_calls": "SELECT count(*) FROM tool_calls",
    "flow_lineage": "SELECT (SELECT count(*) FROM flow_nodes) + (SELECT count(*) FROM flow_edges)",
    "semantic_searches": "SELECT count(*) FROM semantic_searches",
}


@dataclass
class RefreshResult:
    """Rows added per table by one refresh, and the table sizes after it."""

    added: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    sessions_touched: list[str] = field(default_factory=list)


def _rowcount(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def refresh_inbox_tables(db_path: str | Path) -> RefreshResult:
    """Add what is new in the inbox to every typed table, in one transaction."""

    def work(con: duckdb.DuckDBPyConnection) -> RefreshResult:
        result = RefreshResult()
        touched = [r[0] for r in con.execute(INSERT_CHAT_MESSAGES).fetchall()]
        result.added["chat_messages"] = len(touched)
        result.sessions_touched = sorted(set(touched))
        if result.sessions_touched:
            con.execute(REFRESH_CHAT_SESSIONS, [result.sessions_touched])
        result.added["chat_sessions"] = len(result.sessions_touched)
        result.added["tool_calls"] = _rowcount(con, INSERT_TOOL_CALLS)
        result.added["flow_lineage"] = _rowcount(con, INSERT_FLOW_NODES) + _rowcount(
            con, INSERT_FLOW_EDGES
        )
        result.added["semantic_searches"] = _rowcount(con, INSERT_SEMANTIC_SEARCHES)
        result.totals = {name: _rowcount(con, sql) for name, sql in TABLE_COUNTS.items()}
        return result

    return storage.run_in_transaction(db_path, work)


# ---------------------------------------------------------------------------------------------

__all__ = [
    "RefreshResult",
    "refresh_inbox_tables",
]
