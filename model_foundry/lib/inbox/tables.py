"""Typed tables from the inbox, refreshed by commit position in DuckDB SQL.

``chat_messages`` (one row per message), ``chat_sessions`` (one row per session, the new
messages' figures merged in), ``tool_calls``, ``flow_nodes`` / ``flow_edges`` (the lineage
graph per session) and ``semantic_searches``.

A refresh reads only the inbox rows committed after its position (``commit_seq``, see
``lib/inbox/positions.py``), so its cost follows what is new, not what is stored: rows are
appended in commit order and DuckDB's min-max index skips every older row group. The rows it
adds and its new position are committed in one transaction: a run killed at any instant
neither skips nor repeats a commit.

The tables have no key. An event is still stored once: the inbox holds each event once
(within its dedupe window), each inbox row is read once, and a row whose ``event_id`` the
table already holds within the window of its ``occurred_at`` is left out (what lets a
file whose tables were filled before positions existed catch up by reading the whole inbox
once). That check reads only the stored rows in the new events' time ranges, as the inbox's
own does. Sessions given new messages join ``session_summary_queue`` in the same
transaction. ``rebuild`` empties the tables and reads the whole inbox again: after a changed
parser, or for a table that is new. The tables' shapes are in ``lib/tables/typed.py``.
"""

# No `from __future__ import annotations`: Dagster reads the resource types of decorated
# functions from their live annotations.

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from model_foundry.lib import settings, storage
from model_foundry.lib.events import CHAT_PERSIST, FLOW_LINEAGE, SEMANTIC_SEARCH, TOOL_CALL
from model_foundry.lib.inbox import counts, positions
from model_foundry.lib.inbox.store import DEDUPE_WINDOW, MAX_LOOKUP_RANGES
from model_foundry.lib.tables.summaries import SEED_SUMMARY_QUEUE, SESSION_SUMMARY_QUEUE
from model_foundry.lib.tables.typed import (
    CHAT_MESSAGES,
    CHAT_SESSIONS,
    FLOW_EDGES,
    FLOW_NODES,
    SEMANTIC_SEARCHES,
    TOOL_CALLS,
)

STEP = "inbox_tables"

# ---------------------------------------------------------------------------------------------
# Pure: the SQL of each refresh. ``{seen}`` is the check against the stored rows' time ranges.


def _new_events(subject: str, table: str, seen: str, extra: str = "") -> str:
    """The span's inbox rows of ``subject`` that ``table`` does not hold yet, one per id."""
    return f"""
    SELECT i.* FROM pipeline_event_inbox i
    WHERE {positions.IN_SPAN} AND i.subject = '{subject}' {extra}
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
def _session_delta(seen: str) -> str:
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


def _insert_chat_messages(seen: str) -> str:
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


# Reads chat_sessions (one row per session, about events / 300) to find the touched ones.
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


def _insert_tool_calls(seen: str) -> str:
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


def _insert_flow_nodes(seen: str) -> str:
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


def _insert_flow_edges(seen: str) -> str:
    kind = "AND i.payload->>'$.kind' = 'edge'"
    return f"""
INSERT INTO flow_edges BY NAME
SELECT i.event_id, i.correlation_id, i.occurred_at,
       i.payload->>'$.source' AS source, i.payload->>'$.target' AS target
FROM ({_new_events(FLOW_LINEAGE, "flow_edges", seen, kind)}) i
{_IN_TIME_ORDER}
"""


def _insert_semantic_searches(seen: str) -> str:
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


TYPED = (CHAT_MESSAGES, CHAT_SESSIONS, TOOL_CALLS, FLOW_NODES, FLOW_EDGES, SEMANTIC_SEARCHES)
TYPED_TABLES = tuple(table.name for table in TYPED)

TABLE_COUNTS = {
    "chat_messages": "SELECT count(*) FROM chat_messages",
    "chat_sessions": "SELECT count(*) FROM chat_sessions",
    "tool_calls": "SELECT count(*) FROM tool_calls",
    "flow_lineage": "SELECT (SELECT count(*) FROM flow_nodes) + (SELECT count(*) FROM flow_edges)",
    "semantic_searches": "SELECT count(*) FROM semantic_searches",
}

# The span's distinct times in islands: times closer than twice the window are one range.
_SPAN_ISLANDS = f"""
WITH times AS (
    SELECT DISTINCT occurred_at FROM pipeline_event_inbox i WHERE {positions.IN_SPAN}
), starts AS (
    SELECT occurred_at,
           coalesce(occurred_at - lag(occurred_at) OVER (ORDER BY occurred_at) > ?, true)
               AS starts
    FROM times
), islands AS (
    SELECT occurred_at, sum(starts::INTEGER) OVER (ORDER BY occurred_at) AS island FROM starts
)
SELECT epoch_us(min(occurred_at)), epoch_us(max(occurred_at))
FROM islands GROUP BY island ORDER BY 1
"""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)


def _widened(low_us: int, high_us: int) -> tuple[datetime, datetime]:
    """A range of times (microseconds) widened by the window, inside Python's calendar."""
    low = _EPOCH + timedelta(microseconds=low_us)
    high = _EPOCH + timedelta(microseconds=high_us)
    return (
        low - DEDUPE_WINDOW if low - _FIRST > DEDUPE_WINDOW else _FIRST,
        high + DEDUPE_WINDOW if _LAST - high > DEDUPE_WINDOW else _LAST,
    )


def merged_ranges(
    ranges: list[tuple[datetime, datetime]], most: int = MAX_LOOKUP_RANGES
) -> list[tuple[datetime, datetime]]:
    """Sorted ranges with overlapping ones merged, then the closest merged to ``most``."""
    found: list[tuple[datetime, datetime]] = []
    for low, high in sorted(ranges):
        if found and low <= found[-1][1]:
            found[-1] = (found[-1][0], max(found[-1][1], high))
        else:
            found.append((low, high))
    while len(found) > most:
        gaps = [found[i + 1][0] - found[i][1] for i in range(len(found) - 1)]
        i = gaps.index(min(gaps))
        found[i : i + 2] = [(found[i][0], found[i + 1][1])]
    return found


@dataclass(frozen=True)
class Seen:
    """The check against stored rows: ``t.occurred_at`` within one of the span's ranges.
    Constant ranges let DuckDB skip every row group of the table outside them."""

    ranges: list[tuple[datetime, datetime]]

    @property
    def sql(self) -> str:
        if not self.ranges:
            return "false"
        return " OR ".join("t.occurred_at BETWEEN ? AND ?" for _ in self.ranges)

    def params(self, span: positions.Span) -> list[object]:
        """The parameters of a statement built by :func:`_new_events`, in their order."""
        return [*span.params, *(t for r in self.ranges for t in r)]


def seen_ranges(con: duckdb.DuckDBPyConnection, span: positions.Span) -> Seen:
    rows = con.execute(_SPAN_ISLANDS, [*span.params, 2 * DEDUPE_WINDOW]).fetchall()
    return Seen(merged_ranges([_widened(low, high) for low, high in rows]))


# ---------------------------------------------------------------------------------------------
# I/O: one transaction per refresh.


@dataclass
class RefreshResult:
    """Rows added per table by one refresh, the table sizes after it and the commits read."""

    added: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    sessions_touched: list[str] = field(default_factory=list)
    after: int = positions.NOTHING_READ
    upto: int = positions.NOTHING_READ


def _rowcount(con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None) -> int:
    row = con.execute(sql, params or []).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _add_chat(
    con: duckdb.DuckDBPyConnection, span: positions.Span, seen: Seen, result: RefreshResult
) -> None:
    """Messages, and their figures merged into their sessions."""
    params = seen.params(span)
    con.execute(_session_delta(seen.sql), params)
    try:
        touched = con.execute("SELECT correlation_id FROM _chat_session_delta").fetchall()
        result.sessions_touched = sorted(r[0] for r in touched)
        result.added["chat_messages"] = 0
        if touched:
            result.added["chat_messages"] = _rowcount(con, _insert_chat_messages(seen.sql), params)
            con.execute(MERGE_CHAT_SESSIONS)
            con.execute(INSERT_CHAT_SESSIONS)
            con.execute(REQUEUE_SESSIONS, [span.upto])
            con.execute(QUEUE_SESSIONS, [span.upto])
        result.added["chat_sessions"] = len(touched)
    finally:
        con.execute("DROP TABLE IF EXISTS _chat_session_delta")


def empty_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Empty every typed table and forget the step's position: the next refresh (in the same
    transaction, for :func:`refresh_inbox_tables`) reads the whole inbox."""
    for table in TYPED:
        con.execute(table.delete_all_sql())
    positions.reset(con, STEP)
    counts.reset_counts(con)


def refresh_in(con: duckdb.DuckDBPyConnection, *, rebuild: bool = False) -> RefreshResult:
    """Add the commits after the step's position to every typed table and advance it, and
    the same for the exporter's counts (``lib/inbox/counts.py``); the caller owns the
    transaction."""
    if rebuild:
        empty_tables(con)
    span = positions.span(con, STEP)
    result = RefreshResult(after=span.after, upto=span.upto)
    if not span.empty:
        seen = seen_ranges(con, span)
        params = seen.params(span)
        _add_chat(con, span, seen, result)
        result.added["tool_calls"] = _rowcount(con, _insert_tool_calls(seen.sql), params)
        result.added["flow_lineage"] = _rowcount(
            con, _insert_flow_nodes(seen.sql), params
        ) + _rowcount(con, _insert_flow_edges(seen.sql), params)
        result.added["semantic_searches"] = _rowcount(
            con, _insert_semantic_searches(seen.sql), params
        )
        positions.advance(con, span)
    if rebuild:
        # Made again from the rebuilt messages and the stored summaries, not from what the
        # rebuild touched (every session): a session its summaries cover stays off it.
        con.execute(SESSION_SUMMARY_QUEUE.delete_all_sql())
        con.execute(SEED_SUMMARY_QUEUE)
    counts.refresh_counts(con)
    result.totals = {name: _rowcount(con, sql) for name, sql in TABLE_COUNTS.items()}
    return result


def refresh_inbox_tables(db_path: str | Path, *, rebuild: bool = False) -> RefreshResult:
    """Add what the inbox committed since the last refresh to every typed table, in one
    transaction, under ``MODEL_FOUNDRY_DOWNSTREAM_MEMORY_LIMIT``; ``rebuild``: start over."""
    limit = settings.downstream_memory_limit()
    with storage.BatchWriter(db_path, memory_limit=limit) as writer:
        return writer.write(lambda con: refresh_in(con, rebuild=rebuild))


# ---------------------------------------------------------------------------------------------

__all__ = [
    "STEP",
    "TYPED_TABLES",
    "RefreshResult",
    "Seen",
    "empty_tables",
    "merged_ranges",
    "refresh_in",
    "refresh_inbox_tables",
    "seen_ranges",
]
