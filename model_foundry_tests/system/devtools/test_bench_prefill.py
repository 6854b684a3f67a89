"""``model-foundry bench prefill`` with a tiny workload on the real weights: both runs go
through every step and report the figures the docs quote (no timing is asserted: the ratios
are the benchmark's, measured in docs/benchmarks.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_foundry.cli import build_parser

pytestmark = pytest.mark.timeout(600)

STEP_FIELDS = {
    "run", "step", "requests", "errors", "retried", "prompt_tokens", "prefill_tokens_computed",
    "generated_tokens", "generated_tps", "wall_s", "slot_fill_ratio", "prefill_floor_tokens",
    "prompt_tokens_tokenized",
}  # fmt: skip


def test_bench_prefill_runs_both_ways_and_reports_its_ratios(
    llama_server_bin: Path, gemma_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = build_parser().parse_args(
        ["bench", "prefill", "--prompts", "2", "--samples", "2", "--sessions", "1",
         "--session-lines", "40", "--judged-prompts", "1", "--json"]
    )  # fmt: skip
    code = args.func(args)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    *steps, summary = lines
    # A run with failed attempts says why they failed.
    assert code == 0, (summary["off"]["failure_causes"], summary["on"]["failure_causes"])
    assert [(s["run"], s["step"]) for s in steps] == [
        (run, step) for run in ("off", "on") for step in ("fanout", "mapreduce", "judge")
    ]
    for s in steps:
        assert set(s) == STEP_FIELDS
        # Every failed attempt was asked again and then answered (a connection dropped
        # under the suite's load is retried, as everywhere).
        assert s["errors"] == s["retried"] and s["requests"] > 0, s
        assert 0 <= s["prefill_tokens_computed"] <= s["prompt_tokens"], s
        assert s["generated_tokens"] > 0 and s["generated_tps"] > 0, s
        assert 0 < s["slot_fill_ratio"] <= 1.0, s
        # The floor's prompts, tokenized by the servers, are the tokens they reported.
        assert s["prompt_tokens_tokenized"] == s["prompt_tokens"], s
    # 2 prompts x 2 roles x 2 samples; 3 pairs of answers x 2 orders; alike in both runs.
    asked = {(s["run"], s["step"]): s["requests"] - s["retried"] for s in steps}
    assert asked["off", "fanout"] == asked["on", "fanout"] == 8
    assert asked["off", "judge"] == asked["on", "judge"] == 6
    assert asked["off", "mapreduce"] == asked["on", "mapreduce"] >= 3
    assert isinstance(summary["prefill_ratio"], float)
    assert isinstance(summary["throughput_ratio"], float)
    # No run computes fewer prompt tokens than the floor of its requests: the servers reuse
    # exact prefixes only, and nothing else left a prefix in their caches.
    for run in ("off", "on"):
        t = summary[run]
        assert t["floor_counts_reported_tokens"] is True, t
        assert 0 < t["prefill_floor_tokens"] <= t["prefill_tokens_computed"], t
    assert summary["floor_ratio"] <= summary["prefill_ratio"], summary
    assert set(summary["step_throughput_ratios"]) == {"fanout", "mapreduce", "judge"}
