"""Session summaries and their translations."""

import dagster as dg

from model_foundry.defs.summaries.assets import session_summaries, session_summary_translations

defs = dg.Definitions(assets=[session_summaries, session_summary_translations])
