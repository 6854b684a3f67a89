"""pipeline_event_inbox_job: one subject's drain, as the inbox sensors launch it."""

import dagster as dg

from model_foundry.defs.inbox.assets import (
    pipeline_event_inbox_record,
)

inbox_job = dg.define_asset_job(
    "pipeline_event_inbox_job",
    selection=dg.AssetSelection.assets(pipeline_event_inbox_record),
    description="Drain one subject's events into DuckDB (launched by the inbox sensors).",
)
