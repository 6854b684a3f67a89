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


def test_the_export_passes_its_checks_and_shows_its_columns_and_rows(exported) -> None:
    checks = exported["checks"]
    assert sorted(checks) == ["eval_sets_covered", "held_back_share", "no_secret_in_views"]
    assert all(c.passed for c in checks.values())
    rows = pq.read_table(exported["folder"] / "samples.parquet").to_pylist()
    assert checks["held_back_share"].metadata["records"].value == len(rows)
    meta = exported["meta"]
    hf = next((exported["folder"] / "hf" / "samples").glob("*.parquet"))
    assert [c.name for c in meta["dagster/column_schema"].columns] == pq.read_schema(hf).names
    previewed = [r.data for r in meta["preview"].records]
    kept = [r for r in rows if r["kept"]]
    assert [r["cause"] for r in previewed] == ["kept"] * min(5, len(kept)) + [
        r["dropped_by"] for r in rows if not r["kept"]
    ][:5]
    assert {r["id"] for r in previewed} <= {r["id"] for r in rows}
