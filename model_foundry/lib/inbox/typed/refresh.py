"""One transaction per refresh: the commits after the step's position added to every typed
table, the touched sessions queued for a summary, the position advanced."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from model_foundry.lib import settings, storage
from model_foundry.lib.inbox import commit_spans, counts
from model_foundry.lib.inbox.typed import statements
from model_foundry.lib.inbox.typed.seen import Seen, seen_ranges
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

TYPED = (CHAT_MESSAGES, CHAT_SESSIONS, TOOL_CALLS, FLOW_NODES, FLOW_EDGES, SEMANTIC_SEARCHES)
TYPED_TABLES = tuple(table.name for table in TYPED)

TABLE_COUNTS = {
    "chat_messages": "SELECT count(*) FROM chat_messages",
    "chat_sessions": "SELECT count(*) FROM chat_sessions",
    "tool_calls": "SELECT count(*) FROM tool_calls",
    "flow_lineage": "SELECT (SELECT count(*) FROM flow_nodes) + (SELECT count(*) FROM flow_edges)",
    "semantic_searches": "SELECT count(*) FROM semantic_searches",
}


@dataclass
class RefreshResult:
    """Rows added per table by one refresh, the table sizes after it and the commits read."""

    added: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    sessions_touched: list[str] = field(default_factory=list)
    after: int = commit_spans.NOTHING_READ
    upto: int = commit_spans.NOTHING_READ


def _rowcount(con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None) -> int:
    row = con.execute(sql, params or []).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _add_chat(
    con: duckdb.DuckDBPyConnection, span: commit_spans.Span, seen: Seen, result: RefreshResult
) -> None:
    """Messages, and their figures merged into their sessions."""
    params = seen.params(span)
    con.execute(statements.session_delta(seen.sql), params)
    try:
        touched = con.execute("SELECT correlation_id FROM _chat_session_delta").fetchall()
        result.sessions_touched = sorted(r[0] for r in touched)
        result.added["chat_messages"] = 0
        if touched:
            result.added["chat_messages"] = _rowcount(
                con, statements.insert_chat_messages(seen.sql), params
            )
            con.execute(statements.MERGE_CHAT_SESSIONS)
            con.execute(statements.INSERT_CHAT_SESSIONS)
            con.execute(statements.REQUEUE_SESSIONS, [span.upto])
            con.execute(statements.QUEUE_SESSIONS, [span.upto])
        result.added["chat_sessions"] = len(touched)
    finally:
        con.execute("DROP TABLE IF EXISTS _chat_session_delta")


def empty_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Empty every typed table and forget the step's position: the next refresh (in the same
    transaction, for :func:`refresh_inbox_tables`) reads the whole inbox."""
    for table in TYPED:
        con.execute(table.delete_all_sql())
    commit_spans.reset(con, STEP)
    counts.reset_counts(con)


def refresh_in(con: duckdb.DuckDBPyConnection, *, rebuild: bool = False) -> RefreshResult:
    """Add the commits after the step's position to every typed table and advance it, and
    the same for the exporter's counts (``lib/inbox/counts.py``); the caller owns the
    transaction."""
    if rebuild:
        empty_tables(con)
    span = commit_spans.span(con, STEP)
    result = RefreshResult(after=span.after, upto=span.upto)
    if not span.empty:
        seen = seen_ranges(con, span)
        params = seen.params(span)
        _add_chat(con, span, seen, result)
        result.added["tool_calls"] = _rowcount(con, statements.insert_tool_calls(seen.sql), params)
        result.added["flow_lineage"] = _rowcount(
            con, statements.insert_flow_nodes(seen.sql), params
        ) + _rowcount(con, statements.insert_flow_edges(seen.sql), params)
        result.added["semantic_searches"] = _rowcount(
            con, statements.insert_semantic_searches(seen.sql), params
        )
        commit_spans.advance(con, span)
    if rebuild:
        # Made again from the rebuilt messages and the stored summaries, not from what the
        # rebuild touched (every session): a session its summaries cover stays off it.
        con.execute(SESSION_SUMMARY_QUEUE.delete_all_sql())
        con.execute(SEED_SUMMARY_QUEUE)
    counts.refresh_counts(con)
    result.totals = {name: _rowcount(con, count) for name, count in TABLE_COUNTS.items()}
    return result


def refresh_inbox_tables(db_path: str | Path, *, rebuild: bool = False) -> RefreshResult:
    """Add what the inbox committed since the last refresh to every typed table, in one
    transaction, under ``MODEL_FOUNDRY_DOWNSTREAM_MEMORY_LIMIT``; ``rebuild``: start over."""
    limit = settings.downstream_memory_limit()
    with storage.BatchWriter(db_path, memory_limit=limit) as writer:
        return writer.write(lambda con: refresh_in(con, rebuild=rebuild))


__all__ = [
    "STEP",
    "TABLE_COUNTS",
    "TYPED",
    "TYPED_TABLES",
    "RefreshResult",
    "empty_tables",
    "refresh_in",
    "refresh_inbox_tables",
]
