"""The ``model_foundry`` code location: every definition under ``defs/``, and the global choices.

Each domain under ``model_foundry/defs/`` holds its assets, checks, jobs, sensors and
schedules at module scope, and ``defs/resources.py`` registers the resources once; Dagster's
loader finds them all. What applies to the whole code location is chosen here.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from model_foundry.defs.automation import automation_sensor


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions.merge(
        dg.load_from_defs_folder(path_within_project=Path(__file__).parent),
        dg.Definitions(
            sensors=[automation_sensor()],
            # One process per run, not one per step: every step writes the same DuckDB file
            # (one writer at a time anyway), and a subprocess per asset check costs seconds
            # of imports.
            executor=dg.in_process_executor,
        ),
    )
