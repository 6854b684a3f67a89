"""The one ``Definitions`` object of the ``model_foundry`` code location."""

from __future__ import annotations

import dagster as dg

from model_foundry.automation import automation_sensors
from model_foundry.completions import slots_resource_from_env
from model_foundry.datasets import dataset_assets, dataset_jobs, dataset_schedules
from model_foundry.inbox import inbox_assets, inbox_checks, inbox_jobs
from model_foundry.inbox_tables import inbox_table_assets
from model_foundry.resources import resources_from_env
from model_foundry.run_health import run_health_sensors
from model_foundry.sensors import inbox_sensors
from model_foundry.summaries import summary_assets
from model_foundry.throughput import throughput_assets

defs = dg.Definitions(
    assets=[
        *inbox_assets,
        *inbox_table_assets,
        *summary_assets,
        *throughput_assets,
        *dataset_assets,
    ],
    asset_checks=[*inbox_checks],
    jobs=[*inbox_jobs, *dataset_jobs],
    schedules=[*dataset_schedules],
    sensors=[*inbox_sensors, *automation_sensors, *run_health_sensors],
    resources={**resources_from_env(), "slots": slots_resource_from_env()},
    # One process per run, not one per step: every step writes the same DuckDB file (one
    # writer at a time anyway), and a subprocess per asset check costs seconds of imports.
    executor=dg.in_process_executor,
)
