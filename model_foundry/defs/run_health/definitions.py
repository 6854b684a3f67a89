"""Runs whose worker died are found and failed."""

import dagster as dg

from model_foundry.defs.run_health.sensors import stale_run_sensor

defs = dg.Definitions(sensors=[stale_run_sensor])
