"""``slot_throughput``: how each slot and model performed over a recent window.

Per slot and model: attempts, errors and their share, prompt and generation tokens per
second, time to first token, latency p50 and p95. Each materialization appends one snapshot
(``slot_throughput_latest`` is the newest); with no completion recorded since the last
snapshot it appends nothing and says so. The table's shape is ``lib/tables/throughput.py``.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from pathlib import Path

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.tables.base import fetch
from model_foundry.lib.tables.throughput import SLOT_THROUGHPUT, ThroughputRow

# Pure: the snapshot SQL. Parameters: window hours; the snapshot time is the transaction's now().
SNAPSHOT_SQL = f"""
INSERT INTO {SLOT_THROUGHPUT.name} BY NAME
SELECT now() AS computed_at,
       now() - to_hours(?::BIGINT) AS window_start,
       now() AS window_end,
       slot, model,
       any_value(runtime) AS runtime,
       count(*) AS attempts,
       count(*) FILTER (WHERE status = 'ok') AS ok,
       count(*) FILTER (WHERE status <> 'ok') AS errors,
       round(count(*) FILTER (WHERE status <> 'ok') / count(*), 4) AS error_share,
       sum(prompt_tokens) AS prompt_tokens,
       sum(completion_tokens) AS completion_tokens,
       round(avg(prompt_tps), 2) AS prompt_tps,
       round(avg(gen_tps), 2) AS gen_tps,
       quantile_cont(ttft_s, 0.5) AS ttft_p50_s,
       quantile_cont(ttft_s, 0.95) AS ttft_p95_s,
       quantile_cont(latency_s, 0.5) AS latency_p50_s,
       quantile_cont(latency_s, 0.95) AS latency_p95_s,
       max(recorded_at) AS last_completion_at
FROM llm_completions
WHERE recorded_at >= now() - to_hours(?::BIGINT)
GROUP BY slot, model
RETURNING *
"""

NEWEST_COMPLETION_SQL = "SELECT max(recorded_at) FROM llm_completions"
NEWEST_SNAPSHOT_SQL = f"SELECT max(last_completion_at) FROM {SLOT_THROUGHPUT.name}"

# The columns a person reads in the asset's table, in that order.
COLUMNS = (
    "slot",
    "model",
    "runtime",
    "attempts",
    "ok",
    "errors",
    "error_share",
    "gen_tps",
    "prompt_tps",
    "ttft_p50_s",
    "ttft_p95_s",
    "latency_p50_s",
    "latency_p95_s",
)
# Figures drawn per slot over materializations.
PLOTTED = ("gen_tps", "ttft_p50_s", "error_share")

_HINTS = typing.get_type_hints(ThroughputRow)


def column_type(name: str) -> str:
    """A column's type for a table in the Dagster UI: ``string``, ``int`` or ``float``."""
    kinds = set(typing.get_args(_HINTS[name])) or {_HINTS[name]}
    return "string" if str in kinds else "int" if int in kinds else "float"


def cell(row: ThroughputRow, name: str) -> str | int | float | None:
    """``row``'s value of column ``name`` as the UI's table shows it."""
    value = getattr(row, name)
    if value is None or isinstance(value, str | int):
        return value
    return float(value)


def snapshot_throughput(db_path: str | Path, window_hours: int) -> list[ThroughputRow] | None:
    """Append a snapshot; ``None`` when no completion arrived since the last one."""

    def work(con: duckdb.DuckDBPyConnection) -> list[ThroughputRow] | None:
        newest = con.execute(NEWEST_COMPLETION_SQL).fetchone()[0]
        seen = con.execute(NEWEST_SNAPSHOT_SQL).fetchone()[0]
        if newest is None or (seen is not None and newest <= seen):
            return None
        return fetch(con, ThroughputRow, SNAPSHOT_SQL, [window_hours, window_hours])

    return storage.run_in_transaction(db_path, work)


def slot_label(row: ThroughputRow, rows: Sequence[ThroughputRow]) -> str:
    """The slot's name, with the model when the slot served more than one in the window."""
    models = sum(1 for other in rows if other.slot == row.slot)
    return row.slot if models == 1 else f"{row.slot}/{row.model}"


def plot_values(rows: Sequence[ThroughputRow]) -> dict[str, float]:
    """``<figure>/<slot>`` floats, which the asset's Plots tab draws over materializations."""
    plots: dict[str, float] = {}
    for r in rows:
        for figure in PLOTTED:
            value = getattr(r, figure)
            if value is not None:
                plots[f"{figure}/{slot_label(r, rows)}"] = float(value)
    return plots


__all__ = [
    "COLUMNS",
    "cell",
    "column_type",
    "plot_values",
    "slot_label",
    "snapshot_throughput",
]
