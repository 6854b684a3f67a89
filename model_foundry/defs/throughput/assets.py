"""The slot_throughput asset: a per-slot, per-model snapshot of the completions."""

import dagster as dg
from pydantic import Field

from model_foundry.defs import keys
from model_foundry.defs.automation import on_new_upstream_data
from model_foundry.defs.metadata import table_metadata
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.lib.tables.throughput import SLOT_THROUGHPUT, ThroughputRow
from model_foundry.lib.throughput import (
    COLUMNS,
    cell,
    column_type,
    plot_values,
    snapshot_throughput,
)


class ThroughputConfig(dg.Config):
    window_hours: int = Field(default=24, description="Completions this recent are counted.")


@dg.asset(
    deps=[keys.SESSION_SUMMARIES, keys.SESSION_SUMMARY_TRANSLATIONS, keys.DATASET_SAMPLES],
    group_name="slots",
    kinds={"duckdb"},
    metadata=table_metadata(SLOT_THROUGHPUT),
    automation_condition=on_new_upstream_data(),
    description=(
        "Per slot and model over a window: tokens/s, time to first token, latency p50/p95 and "
        "error share. Appends a snapshot; the view slot_throughput_latest shows the newest."
    ),
)
def slot_throughput(
    context: dg.AssetExecutionContext, config: ThroughputConfig, duckdb: FoundryDuckDB
) -> dg.MaterializeResult:
    rows = snapshot_throughput(duckdb.database, config.window_hours)
    if rows is None:
        context.log.info("no completion since the last snapshot; nothing to add")
        return dg.MaterializeResult(
            metadata={"slots": 0, "new_snapshot": False, "window_hours": config.window_hours}
        )
    return dg.MaterializeResult(
        metadata={
            "slots": len(rows),
            "new_snapshot": True,
            "window_hours": config.window_hours,
            "dagster/row_count": len(rows),
            "gen_tps_per_slot": dg.MetadataValue.json(
                {f"{r.slot}/{r.model}": r.gen_tps for r in rows}
            ),
            "throughput": _slot_table(rows),
            **plot_values(rows),
        }
    )


def _slot_table(rows: list[ThroughputRow]) -> dg.TableMetadataValue:
    """One row per slot (and model): the snapshot as the UI's table."""
    return dg.MetadataValue.table(
        records=[dg.TableRecord({c: cell(r, c) for c in COLUMNS}) for r in rows],
        schema=dg.TableSchema(columns=[dg.TableColumn(c, column_type(c)) for c in COLUMNS]),
    )
