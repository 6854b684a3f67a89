"""The dispatcher against the simulator over real HTTP: limits, fullness, failures, the bench.

What the unit, integration and system tests of ``lib/slots/test_dispatcher.py`` share."""

from __future__ import annotations

from model_foundry.devtools.simulator import (
    LatencyModel,
)
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT


def _latency(gen_tps: float) -> LatencyModel:
    return LatencyModel(prompt_tps=1e5, gen_tps=gen_tps)
