"""``bench keys`` at a small size: both keyed files move to the keyless layout and the store
still finds every answered request of the lookup, none of the missing ones."""

from __future__ import annotations

import pytest

from model_foundry.devtools.bench.downstream import TIMED_VIEWS
from model_foundry.devtools.bench.keys import LOOKUP_KEYS, run_bench_keys

pytestmark = pytest.mark.timeout(600)


def test_bench_keys_moves_both_files_and_finds_the_stored_answers() -> None:
    result = run_bench_keys(4000)
    for side in (result["small"], result["big"]):
        # Half the looked-up keys were stored as answered, half never were.
        assert side["found"] == LOOKUP_KEYS // 2
        assert side["migrate_s"] > 0 and side["peak_rss_mb"] > 0
        assert set(side["views_s"]) == set(TIMED_VIEWS)
    assert result["big"]["rows"] == 4000 and result["small"]["rows"] == 1000
    assert result["lookup_s_ratio"] > 0
