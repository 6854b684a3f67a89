"""The slot_throughput asset: a per-slot, per-model snapshot of the completions."""

import dagster as dg
from pydantic import Field

from model_foundry.defs.automation import on_new_upstream_data
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.lib.throughput import (
    COLUMNS,
    COUNT_COLUMNS,
    TEXT_COLUMNS,
    snapshot_throughput,
)


class ThroughputConfig(dg.Config):
    window_hours: int = Field(default=24, description="Completions this recent are counted.")


@dg.asset(
    deps=[
        dg.AssetKey("session_summaries"),
        dg.AssetKey("session_summary_translations"),
        dg.AssetKey("dataset_samples"),
    ],
    group_name="slots",
    kinds={"duckdb"},
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
                {f"{r['slot']}/{r['model']}": r["gen_tps"] for r in rows}
            ),
            "throughput": _slot_table(rows),
            **_slot_plots(rows),
        }
    )


def _column_type(name: str) -> str:
    return "string" if name in TEXT_COLUMNS else "int" if name in COUNT_COLUMNS else "float"


def _cell(name: str, value: object) -> object:
    if value is None or name in TEXT_COLUMNS:
        return value
    return int(value) if name in COUNT_COLUMNS else float(value)  # type: ignore[arg-type]


def _slot_table(rows: list[dict]) -> dg.TableMetadataValue:
    """One row per slot (and model): the snapshot as the UI's table."""
    return dg.MetadataValue.table(
        records=[dg.TableRecord({c: _cell(c, r[c]) for c in COLUMNS}) for r in rows],
        schema=dg.TableSchema(columns=[dg.TableColumn(c, _column_type(c)) for c in COLUMNS]),
    )


def _slot_plots(rows: list[dict]) -> dict[str, float]:
    """``<figure>/<slot>`` floats, which the asset's Plots tab draws over materializations."""
    slots_with_two_models = {
        r["slot"] for r in rows if sum(1 for o in rows if o["slot"] == r["slot"]) > 1
    }
    plots: dict[str, float] = {}
    for r in rows:
        name = r["slot"] if r["slot"] not in slots_with_two_models else f"{r['slot']}/{r['model']}"
        for figure in ("gen_tps", "ttft_p50_s", "error_share"):
            if r[figure] is not None:
                plots[f"{figure}/{name}"] = float(r[figure])
    return plots
