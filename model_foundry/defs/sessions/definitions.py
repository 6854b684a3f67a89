"""What the sessions did: their flow graphs and which slot did what share of their turns."""

import dagster as dg

from model_foundry.defs.sessions.assets import session_flow, session_routing
from model_foundry.defs.sessions.checks import session_checks

defs = dg.Definitions(assets=[session_flow, session_routing], asset_checks=session_checks)
