"""Each table asset shows its DuckDB table's columns (``dagster/column_schema``) before any
run: the same names, types and NOT NULLs as a fresh DuckDB file's ``DESCRIBE`` gives."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb

from model_foundry.lib import storage

# Each table asset and the one table it writes (flow_lineage writes two, so it shows none; the
# export assets show their export's columns once materialized).
TABLE_OF = {
    "pipeline_event_inbox_record": "pipeline_event_inbox",
    "chat_messages": "chat_messages",
    "chat_sessions": "chat_sessions",
    "tool_calls": "tool_calls",
    "semantic_searches": "semantic_searches",
    "session_trajectories": "session_trajectories",
    "session_summaries": "session_summaries",
    "session_summary_translations": "session_summary_translations",
    "session_flow": "session_flow",
    "session_routing": "session_routing",
    "slot_throughput": "slot_throughput",
}


def _named(con: duckdb.DuckDBPyConnection, declared: str) -> str:
    return con.execute(f"SELECT typeof(CAST(NULL AS {declared}))").fetchone()[0]


def test_every_table_asset_shows_the_columns_duckdb_describes(tmp_path: Path) -> None:
    from model_foundry.definitions import defs

    graph = defs().resolve_asset_graph()
    shown = {}
    for key in graph.get_all_asset_keys():
        schema = graph.get(key).metadata.get("dagster/column_schema")
        if schema is not None:
            shown[key.to_user_string()] = schema.value
    assert sorted(shown) == sorted(TABLE_OF)
    with storage.connect(tmp_path / "fresh.duckdb") as con:
        for asset, table in TABLE_OF.items():
            described = con.execute(f"DESCRIBE {table}").fetchall()
            wanted = [(name, kind, null == "YES") for name, kind, null, *_ in described]
            columns = shown[asset].columns
            # The DDL's spelling (TIMESTAMPTZ) as DuckDB names it (TIMESTAMP WITH TIME ZONE).
            got = [(c.name, _named(con, c.type), c.constraints.nullable) for c in columns]
            assert got == wanted, asset


def test_the_schema_is_the_tables_own_metadata_not_a_runs() -> None:
    """Definition metadata: the UI shows it with no materialization yet."""
    from model_foundry.defs.datasets.trajectories import session_trajectories

    spec = next(iter(session_trajectories.specs))
    assert isinstance(spec.metadata["dagster/column_schema"], dg.TableSchemaMetadataValue)
