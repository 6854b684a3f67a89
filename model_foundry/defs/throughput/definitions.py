"""The per-slot throughput snapshot."""

import dagster as dg

from model_foundry.defs.throughput.assets import slot_throughput

defs = dg.Definitions(assets=[slot_throughput])
