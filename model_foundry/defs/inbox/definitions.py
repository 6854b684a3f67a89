"""The inbox: subject-partitioned drain asset, its checks, job and sensors."""

import dagster as dg

from model_foundry.defs.inbox.assets import pipeline_event_inbox_record
from model_foundry.defs.inbox.checks import (
    inbox_correlation_ids_present,
    inbox_dead_letter_share,
    inbox_event_ids_unique,
)
from model_foundry.defs.inbox.jobs import inbox_job
from model_foundry.defs.inbox.sensors import inbox_sensors

defs = dg.Definitions(
    assets=[pipeline_event_inbox_record],
    asset_checks=[inbox_event_ids_unique, inbox_correlation_ids_present, inbox_dead_letter_share],
    jobs=[inbox_job],
    sensors=inbox_sensors,
)
