"""Typed tables refreshed from the inbox."""

import dagster as dg

from model_foundry.defs.inbox_tables.assets import inbox_tables

defs = dg.Definitions(assets=[inbox_tables])
