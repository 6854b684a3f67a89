"""Declarative automation: downstream assets follow the inbox without anyone clicking.

Every downstream asset carries :func:`on_new_upstream_data`; one automation condition sensor
(running by default) evaluates them. When an inbox run lands events, the next tick requests
the typed tables, the summaries, the translations and the throughput snapshot, in one run.
"""

from __future__ import annotations

import dagster as dg

from model_foundry.lib import settings


def on_new_upstream_data() -> dg.AutomationCondition:
    """``eager()`` without its "no dependency missing" clause.

    The inbox is partitioned by subject; a subject that never had an event has a partition
    that was never materialized, and plain ``eager()`` would then never update anything
    downstream. Everything here reads whatever the upstream tables hold, so missing
    partitions are no reason to wait.
    """
    return dg.AutomationCondition.eager().without(~dg.AutomationCondition.any_deps_missing())


automation_sensor = dg.AutomationConditionSensorDefinition(
    "model_foundry_automation_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=settings.sensor_interval_s(),
    description="Materializes downstream assets when the inbox (or their upstream) has new data.",
)

automation_sensors = [automation_sensor]

__all__ = ["automation_sensor", "automation_sensors", "on_new_upstream_data"]
