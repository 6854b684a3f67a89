"""Dataset collection: the asset, its job and nightly schedule."""

import dagster as dg

from model_foundry.defs.datasets.assets import (
    dataset_collection_job,
    dataset_collection_schedule,
    dataset_samples,
)

defs = dg.Definitions(
    assets=[dataset_samples], jobs=[dataset_collection_job], schedules=[dataset_collection_schedule]
)
