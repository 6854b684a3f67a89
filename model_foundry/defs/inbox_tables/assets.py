"""The typed inbox tables, refreshed from the inbox by commit position.

Chat messages and sessions, tool calls, flow lineage and semantic searches. Each run reads
only what the inbox committed since the last one; ``rebuild: true`` in the run config (or
``model-foundry rebuild``) empties the tables and reads the whole inbox again.
"""

from typing import Any

import dagster as dg

from model_foundry.defs import keys
from model_foundry.defs.automation import on_new_upstream_data
from model_foundry.defs.metadata import table_metadata
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.lib.inbox.typed import (
    refresh_inbox_tables,
)
from model_foundry.lib.tables.base import Table
from model_foundry.lib.tables.typed import (
    CHAT_MESSAGES,
    CHAT_SESSIONS,
    SEMANTIC_SEARCHES,
    TOOL_CALLS,
)

# The asset.


class InboxTablesConfig(dg.Config):
    rebuild: bool = False


_DESCRIPTIONS = {
    "chat_messages": "One row per chat message of llm.chat.persist events.",
    "chat_sessions": "One row per chat session: message counts, models, slots, token usage.",
    "tool_calls": "One row per llm.tool_call event (see the tool_call_stats view).",
    "flow_lineage": "The lineage graph per session: tables flow_nodes and flow_edges.",
    "semantic_searches": "One row per obsidian.semantic_search event: query and top result.",
}

_TABLES: dict[str, Table[Any]] = {
    "chat_messages": CHAT_MESSAGES,
    "chat_sessions": CHAT_SESSIONS,
    "tool_calls": TOOL_CALLS,
    "semantic_searches": SEMANTIC_SEARCHES,
}

INBOX_TABLE_KEYS = [dg.AssetKey(name) for name in _DESCRIPTIONS]


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            key,
            deps=[keys.INBOX],
            group_name="inbox_tables",
            kinds={"duckdb"},
            description=_DESCRIPTIONS[key.path[-1]],
            automation_condition=on_new_upstream_data(),
            # flow_lineage is two tables (flow_nodes, flow_edges): no one schema to show.
            metadata=table_metadata(_TABLES[key.path[-1]]) if key.path[-1] in _TABLES else {},
        )
        for key in INBOX_TABLE_KEYS
    ],
    name="inbox_tables",
)
def inbox_tables(
    context: dg.AssetExecutionContext, config: InboxTablesConfig, duckdb: FoundryDuckDB
):
    result = refresh_inbox_tables(duckdb.database, rebuild=config.rebuild)
    context.log.info(f"inbox tables: added {result.added}")
    for key in INBOX_TABLE_KEYS:
        name = key.path[-1]
        metadata = {
            "added": result.added.get(name, 0),
            "dagster/row_count": result.totals.get(name, 0),
            "inbox_position": result.upto,
        }
        if name == "chat_sessions":
            metadata["sessions_touched"] = dg.MetadataValue.json(result.sessions_touched[:200])
        yield dg.MaterializeResult(asset_key=key, metadata=metadata)
