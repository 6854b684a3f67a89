"""The typed refresh: typed tables from the inbox, refreshed by commit position in DuckDB SQL.

``chat_messages`` (one row per message), ``chat_sessions`` (one row per session, the new
messages' figures merged in), ``tool_calls``, ``flow_nodes`` / ``flow_edges`` (the lineage
graph per session) and ``semantic_searches``.

A refresh reads only the inbox rows committed after its position (``commit_seq``, see
``lib/inbox/commit_spans.py``), so its cost follows what is new, not what is stored: rows are
appended in commit order and DuckDB's min-max index skips every older row group. The rows it
adds and its new position are committed in one transaction: a run killed at any instant
neither skips nor repeats a commit.

The tables have no key. An event is still stored once: the inbox holds each event once
(within its dedupe window), each inbox row is read once, and a row whose ``event_id`` the
table already holds within the window of its ``occurred_at`` is left out (what lets a
file whose tables were filled before positions existed catch up by reading the whole inbox
once). That check reads only the stored rows in the new events' time ranges, as the inbox's
own does (``lib/inbox/dedupe_window.py``). Sessions given new messages join
``session_summary_queue`` in the same transaction. ``rebuild`` empties the tables and reads
the whole inbox again: after a changed parser, or for a table that is new.

The tables' shapes are in ``lib/tables/typed.py``; here, the statements are in
``statements.py``, the duplicate check in ``seen.py`` and the transaction in ``refresh.py``.
"""

from __future__ import annotations

from model_foundry.lib.inbox.typed.refresh import (
    STEP,
    TYPED_TABLES,
    RefreshResult,
    empty_tables,
    refresh_in,
    refresh_inbox_tables,
)
from model_foundry.lib.inbox.typed.seen import Seen, seen_ranges

__all__ = [
    "STEP",
    "TYPED_TABLES",
    "RefreshResult",
    "Seen",
    "empty_tables",
    "refresh_in",
    "refresh_inbox_tables",
    "seen_ranges",
]
