"""``bench recipe`` at a small size: both runs generate every row, the last line sums up,
and no slot ever has more than its ``parallel`` in flight (as the simulator counted)."""

from __future__ import annotations

import json

import pytest

from model_foundry_tests.pipeline_helpers import clean_env
from model_foundry_tests.shared.cli.cli import cli

pytestmark = pytest.mark.timeout(600)


def test_bench_recipe_reports_both_runs_within_the_slots_caps() -> None:
    done = cli(
        "bench", "recipe", "--rows", "12", "--buffer", "4", "--speed", "20", "--json",
        env=clean_env(), timeout=500,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.strip().splitlines()]
    assert [line.get("run") for line in lines] == ["rows", "barrier", None]
    parallel = {"naughty": 3, "kindergarten": 5, "grandpa": 1}
    for run in lines[:2]:
        assert run["rows_complete"] == 12 and run["requests"] == 36 and run["errors"] == 0
        assert set(run["slots"]) == set(parallel)
        for name, slot in run["slots"].items():
            assert slot["parallel"] == parallel[name] and slot["requests"] == 12
            assert 1 <= slot["max_in_flight"] <= parallel[name]
        assert 0 < run["fill_ratio"] <= 1
    last = lines[-1]
    assert last["rows"] == 12 and last["over_parallel"] == []
    assert last["fill_ratio"] == lines[0]["fill_ratio"]
    assert last["makespan_ratio"] == round(lines[0]["makespan_s"] / lines[1]["makespan_s"], 3)
    assert set(last["max_in_flight"]) == {"rows", "barrier"}
