"""The one ``Definitions`` object of the ``model_foundry`` code location.

Each domain under ``model_foundry/defs/`` owns its assets, checks, jobs, sensors and schedules
in its own ``definitions.py``; this merges them with the one resource wiring and the global
choices.
"""

from __future__ import annotations

import dagster as dg

from model_foundry.defs.automation import automation_sensor
from model_foundry.defs.datasets import definitions as datasets
from model_foundry.defs.inbox import definitions as inbox
from model_foundry.defs.inbox_tables import definitions as inbox_tables
from model_foundry.defs.resources import resources_from_env
from model_foundry.defs.run_health import definitions as run_health
from model_foundry.defs.summaries import definitions as summaries
from model_foundry.defs.throughput import definitions as throughput


# Domain modules, not their ``defs`` objects, are imported: Dagster refuses a module with more
# than one Definitions object at module scope.
def build_defs() -> dg.Definitions:
    return dg.Definitions.merge(
        inbox.defs,
        inbox_tables.defs,
        summaries.defs,
        throughput.defs,
        datasets.defs,
        run_health.defs,
        dg.Definitions(
            sensors=[automation_sensor],
            resources=resources_from_env(),
            # One process per run, not one per step: every step writes the same DuckDB file
            # (one writer at a time anyway), and a subprocess per asset check costs seconds
            # of imports.
            executor=dg.in_process_executor,
        ),
    )


defs = build_defs()
