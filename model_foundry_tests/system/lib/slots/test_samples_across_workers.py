"""Samples as one request across three dispatcher processes that share only NATS leases: a
request with n choices holds n places, so the sequences a slot has in flight never pass its
``parallel``, and reach it. The simulator, a process of its own, counts what it really has
in flight, in sequences.

Across three busy processes the places are seldom free together, so most samples go one per
request (k is split rather than waited for); the test holds the cap whatever the mix."""

from __future__ import annotations

import pytest

from model_foundry.devtools.bench.slot_workers import run_bench_slot_workers
from model_foundry_tests.slot_fixtures import shipped_data, slot_file_from

pytestmark = pytest.mark.timeout(300)


def test_three_workers_sending_n_choices_never_hold_more_places_than_parallel() -> None:
    data = shipped_data()
    # Both the vLLM and the llama.cpp slot take the samples of one prompt together.
    data["slots"]["naughty"]["samples_per_request"] = 3
    data["slots"]["kindergarten"]["samples_per_request"] = 3
    slot_file = slot_file_from(data)
    report = run_bench_slot_workers(240, 3, slot_file=slot_file, samples=3, speed=2.0)

    assert report["errors"] == 0 and report["ok"] == report["prompts"] == 240
    for name, row in report["slots"].items():
        parallel = slot_file.slots[name].parallel
        # Never over the limit in sequences, across three processes; and kept full.
        assert row["max_in_flight"] == parallel, (name, row)
