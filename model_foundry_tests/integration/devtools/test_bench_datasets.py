"""``bench datasets`` at a small size: both exports run, every planted secret is caught and
every planted near duplicate is removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry.devtools.bench.datasets import DUPLICATE_EVERY, run_bench_datasets

pytestmark = pytest.mark.timeout(600)


def test_bench_datasets_reports_both_exports_and_finds_what_it_planted() -> None:
    result = run_bench_datasets([200, 400])
    small, big = result["sizes"]
    for side in ("plain", "hygiene"):
        assert small[side]["records"] == 200 and big[side]["records"] == 400
        assert small[side]["records_per_s"] > 0 and small[side]["peak_rss_mb"] > 0
    assert small["recall"] == big["recall"] == 1.0
    corpus = result["independent_corpus"]
    assert corpus["values"] >= 400 and corpus["kinds"] >= 50
    assert corpus["recall"] == corpus["fragment_free"] == 1.0
    assert big["duplicates_removed"] == len(range(1, 400, DUPLICATE_EVERY))
    assert small["redactions_by_kind"]
    assert result["rss_ratio"] > 0 and result["throughput_ratio"] > 0


def test_the_decontamination_run_holds_back_every_planted_session(tmp_path: Path) -> None:
    from model_foundry.devtools.bench.decontamination import bench_decontamination

    result = bench_decontamination(tmp_path, 3000, 400)
    # Sessions 0, 1000 and 2000 are eval items, and each one's near duplicate repeats it.
    assert result["planted_items"] == 3 and result["planted_rows"] == 6
    assert result["held_back"] == 6
    assert result["with"]["records"] == result["without"]["records"] == 3000
    assert result["without"]["held_back"] == 0
    assert result["time_ratio"] > 0 and result["index"]["file_mb"] > 0


def test_the_samples_decontamination_run_holds_back_every_planted_sample(tmp_path: Path) -> None:
    from model_foundry.devtools.bench.decontamination import bench_decontamination

    result = bench_decontamination(tmp_path, 3000, 400, of="samples")
    # Samples 0, 1000 and 2000 answer with an eval item; no sample repeats another.
    assert result["of"] == "samples"
    assert result["planted_items"] == 3 and result["planted_rows"] == 3
    assert result["held_back"] == 3
    # Every sample is exported (held back ones stay in samples.parquet with their cause).
    assert result["with"]["records"] == result["without"]["records"] == 3000
    assert result["without"]["held_back"] == 0
