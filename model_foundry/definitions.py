"""The one ``Definitions`` object of the ``model_foundry`` code location."""

from __future__ import annotations

import dagster as dg

from model_foundry.inbox import inbox_assets, inbox_checks, inbox_jobs
from model_foundry.resources import resources_from_env
from model_foundry.sensors import inbox_sensors

defs = dg.Definitions(
    assets=[*inbox_assets],
    asset_checks=[*inbox_checks],
    jobs=[*inbox_jobs],
    sensors=[*inbox_sensors],
    resources=resources_from_env(),
)
