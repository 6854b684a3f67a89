"""model_foundry_dead_run_sensor: fails STARTED runs of any job whose worker is gone."""

from __future__ import annotations

import dagster as dg

from model_foundry.defs.run_health.dead_runs import (
    CHECK_INTERVAL_S,
    fail_dead_runs,
)


@dg.sensor(
    name="model_foundry_dead_run_sensor",
    minimum_interval_seconds=CHECK_INTERVAL_S,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Marks runs failed whose worker process died (e.g. killed with the daemon).",
)
def stale_run_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    failed = fail_dead_runs(context.instance)
    if failed:
        context.log.warning(f"marked {len(failed)} runs with a dead worker failed: {failed}")
        return dg.SkipReason(f"marked {len(failed)} runs failed: {', '.join(failed)}")
    return dg.SkipReason("every started run has a live worker")
