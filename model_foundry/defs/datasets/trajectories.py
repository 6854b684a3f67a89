"""The session_trajectories asset: the inbox's sessions as conversations, kept up to date."""

import dagster as dg

from model_foundry.defs import keys
from model_foundry.defs.automation import on_new_upstream_data
from model_foundry.defs.metadata import table_metadata
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.lib.tables.trajectories import SESSION_TRAJECTORIES
from model_foundry.lib.trajectories.store import refresh_session_trajectories


class SessionTrajectoriesConfig(dg.Config):
    rebuild: bool = False


@dg.asset(
    key=keys.SESSION_TRAJECTORIES,
    group_name="datasets",
    kinds={"duckdb"},
    deps=[keys.INBOX],
    automation_condition=on_new_upstream_data(),
    metadata=table_metadata(SESSION_TRAJECTORIES),
    description=(
        "One row per session thread (a worker's conversation) with its turns in session_turns: "
        "tool calls, tool results, reasoning, tools schema, slots and lineage, read from the "
        "inbox's chat and tool-call payloads by commit position."
    ),
)
def session_trajectories(
    context: dg.AssetExecutionContext, config: SessionTrajectoriesConfig, duckdb: FoundryDuckDB
) -> dg.MaterializeResult:
    result = refresh_session_trajectories(duckdb.database, rebuild=config.rebuild)
    context.log.info(
        f"session trajectories: {result.events} events, {result.turns_added} turns added to "
        f"{len(result.sessions_touched)} sessions"
    )
    return dg.MaterializeResult(
        metadata={
            "events": result.events,
            "turns_added": result.turns_added,
            "sessions_touched": len(result.sessions_touched),
            "dagster/row_count": result.threads,
            "inbox_position": result.upto,
        }
    )
