"""The session_flow and session_routing assets: what the sessions did, and on which slot.

Both read only sessions with something new and replace those sessions' rows. session_flow
shows the graphs of its largest changed sessions as pictures in its metadata. Both are in the
``sessions`` asset group; ``lib/flow`` computes them.
"""

import dagster as dg
from pydantic import Field

from model_foundry.defs import keys
from model_foundry.defs.automation import on_new_upstream_data
from model_foundry.defs.metadata import table_metadata
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib import telemetry as telemetry_lib
from model_foundry.lib.flow.graph import relabelled
from model_foundry.lib.flow.shown import DEFAULT_MAX_NODES
from model_foundry.lib.flow.store import (
    FlowRefresh,
    flow_event,
    refresh_session_flow,
    refresh_session_routing,
    turns_by_slot,
)
from model_foundry.lib.hygiene.shown import shown_text
from model_foundry.lib.tables.sessions import SESSION_FLOW, SESSION_ROUTING

# How many of the correlation ids a run changed its metadata lists.
MAX_LISTED = 200


class SessionFlowConfig(dg.Config):
    pictures: int = Field(
        default=3, ge=0, description="Pictures of the largest changed sessions in the metadata."
    )
    max_nodes: int = Field(
        default=DEFAULT_MAX_NODES, ge=10, description="Nodes one picture draws at most."
    )


def _pictures(refresh: FlowRefresh, config: SessionFlowConfig) -> dict[str, dg.MetadataValue]:
    """The largest changed sessions' pictures, their node labels (and slots, roles, models)
    scrubbed before they are drawn: the picture's text lives on in the event log."""
    # matplotlib loads here, not with the code location: every run and code server imports
    # the definitions, and only this asset draws.
    from model_foundry.lib.flow.render import picture_for_metadata

    pictures: dict[str, dg.MetadataValue] = {}
    for i, graph in enumerate(refresh.largest(config.pictures), start=1):
        picture = picture_for_metadata(relabelled(graph, shown_text), max_nodes=config.max_nodes)
        if picture is not None:
            pictures[f"flow_{i}"] = dg.MetadataValue.md(
                f"**{graph.correlation_id}**\n\n{picture.markdown}"
            )
    return pictures


@dg.asset(
    deps=[keys.FLOW_LINEAGE],
    metadata=table_metadata(SESSION_FLOW),
    group_name="sessions",
    kinds={"duckdb"},
    automation_condition=on_new_upstream_data(),
    description=(
        "One row per session with lineage: node and edge events, nodes, edges, roots, "
        "leaves, depth, widest fan-out, parallel branches, uncoordinated parallel work "
        "(branches that never join again), edges to unknown nodes and cycles. The metadata "
        "shows the graphs of the largest changed sessions (model-foundry flow draws any)."
    ),
)
def session_flow(
    context: dg.AssetExecutionContext, config: SessionFlowConfig, duckdb: FoundryDuckDB
) -> dg.MaterializeResult:
    refresh = refresh_session_flow(duckdb.database)
    changed = [r.correlation_id for r in refresh.rows]
    context.log.info(f"session_flow: {len(changed)} sessions rebuilt")
    with telemetry_lib.for_run(context.run.run_id, "session_flow") as telemetry:
        for row in refresh.rows:
            telemetry.emit(telemetry_lib.SESSION_FLOW_EVENT, flow_event(row))
    return dg.MaterializeResult(
        metadata={
            "sessions_changed": len(changed),
            "dagster/row_count": refresh.total_sessions,
            "uncoordinated_sessions": refresh.uncoordinated_sessions,
            "correlation_ids": dg.MetadataValue.json(changed[:MAX_LISTED]),
            "uncoordinated": dg.MetadataValue.json(
                [r.correlation_id for r in refresh.rows if r.uncoordinated][:MAX_LISTED]
            ),
            "with_unknown_nodes": dg.MetadataValue.json(
                [r.correlation_id for r in refresh.rows if r.dangling_edges][:MAX_LISTED]
            ),
            "with_cycles": dg.MetadataValue.json(
                [r.correlation_id for r in refresh.rows if r.cycles][:MAX_LISTED]
            ),
            **_pictures(refresh, config),
            **telemetry.metadata(),
        }
    )


@dg.asset(
    deps=[keys.CHAT_MESSAGES],
    metadata=table_metadata(SESSION_ROUTING),
    group_name="sessions",
    kinds={"duckdb"},
    automation_condition=on_new_upstream_data(),
    description=(
        "Per session, day and slot: the session's own chat turns (llm.chat.persist), their "
        "prompt and completion tokens and their share of the session's turns, with the slot's "
        "roles and model. Turns naming no known slot go to 'unknown', so each session's "
        "shares add up to 1. The view slot_share_weekly sums the last 7 days."
    ),
)
def session_routing(
    context: dg.AssetExecutionContext, duckdb: FoundryDuckDB, slots: SlotsResource
) -> dg.MaterializeResult:
    refresh = refresh_session_routing(duckdb.database, slots.load())
    context.log.info(f"session_routing: {len(refresh.sessions)} sessions rebuilt")
    return dg.MaterializeResult(
        metadata={
            "sessions_changed": len(refresh.sessions),
            "rows_written": len(refresh.rows),
            "dagster/row_count": refresh.total_rows,
            "turns_by_slot": dg.MetadataValue.json(turns_by_slot(refresh.rows)),
            "correlation_ids": dg.MetadataValue.json(refresh.sessions[:MAX_LISTED]),
        }
    )
