"""``slot_throughput``: how each slot and model performed over a recent window.

Per slot and model: attempts, errors and their share, prompt and generation tokens per
second, time to first token, latency p50 and p95. Each materialization appends one snapshot
(``slot_throughput_latest`` is the newest); with no completion recorded since the last
snapshot it appends nothing and says so.
"""

# No `from __future__ import annotations`: Dagster reads the config and resource types of
# decorated functions from their live annotations.

from pathlib import Path
from typing import Any

from model_foundry.lib import storage

# Pure: the snapshot SQL. Parameters: window hours; the snapshot time is the transaction's now().
SNAPSHOT_SQL = """
INSERT INTO slot_throughput
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
RETURNING slot, model, runtime, attempts, ok, errors, error_share, gen_tps, prompt_tps,
          ttft_p50_s, ttft_p95_s, latency_p50_s, latency_p95_s
"""

NEWEST_COMPLETION_SQL = "SELECT max(recorded_at) FROM llm_completions"
NEWEST_SNAPSHOT_SQL = "SELECT max(last_completion_at) FROM slot_throughput"

COLUMNS = [
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
]
TEXT_COLUMNS = ("slot", "model", "runtime")
COUNT_COLUMNS = ("attempts", "ok", "errors")


def snapshot_throughput(db_path: str | Path, window_hours: int) -> list[dict[str, Any]] | None:
    """Append a snapshot; ``None`` when no completion arrived since the last one."""

    def work(con: Any) -> list[dict[str, Any]] | None:
        newest = con.execute(NEWEST_COMPLETION_SQL).fetchone()[0]
        seen = con.execute(NEWEST_SNAPSHOT_SQL).fetchone()[0]
        if newest is None or (seen is not None and newest <= seen):
            return None
        rows = con.execute(SNAPSHOT_SQL, [window_hours, window_hours]).fetchall()
        return [dict(zip(COLUMNS, row, strict=True)) for row in rows]

    return storage.run_in_transaction(db_path, work)


def _cell(value: Any) -> str | float | None:
    return value if value is None or isinstance(value, str) else float(value)


__all__ = ["COLUMNS", "COUNT_COLUMNS", "TEXT_COLUMNS", "snapshot_throughput"]
