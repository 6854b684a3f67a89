"""The fan-out collection's export loads with datasets 3.6 and 5.x as its card says, each
record as samples.parquet holds it, and near-duplicate prompts are asked once: the unit
tests."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from model_foundry_tests.shared.defs.datasets.sample_export import (  # noqa: F401 - fixtures are found by name
    exported_fixture,
)

pytestmark = pytest.mark.timeout(300)


def test_near_duplicate_prompts_are_asked_once(exported) -> None:
    meta = exported["meta"]
    assert meta["near_duplicate_prompts_dropped"] == 1 and meta["prompts"] == 8
    rows = pq.read_table(exported["folder"] / "samples.parquet").to_pylist()
    assert "near" not in {r["prompt_id"] for r in rows}
