"""How ``make test`` and ``make check`` hand the suite to pytest-xdist's workers.

xdist's scope scheduler gives an idle worker the next unit of work in the suite's order
(``conftest.py`` sorts the longest first; ``--no-loadscope-reorder`` keeps that order). Its
units are ours: ``tiers.work_unit``.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

from model_foundry_tests.tiers import work_unit


class SuiteScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)
