"""The fan-out collection's export loads with datasets 3.6 and 5.x as its card says, each
record as samples.parquet holds it, and near-duplicate prompts are asked once: the system
tests."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from model_foundry.devtools import hf_datasets
from model_foundry.lib.exports.layouts import SAMPLES
from model_foundry_tests.hf_loading import load_offline
from model_foundry_tests.shared.defs.datasets.sample_export import (  # noqa: F401 - fixtures are found by name
    exported_fixture,
)

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("environment", list(hf_datasets.ENVIRONMENTS))
def test_the_samples_config_loads_as_written(exported, environment, tmp_path) -> None:
    folder = exported["folder"]
    result = load_offline(environment, folder, tmp_path / "hf")
    assert result["header"]["license"] == "cc-by-4.0"
    source = pq.read_table(folder / "samples.parquet").to_pylist()
    columns = [f.name for f in SAMPLES.schema]
    loaded = result["loaded"]["samples"]
    assert sum(len(rows) for rows in loaded.values()) == len(source) > 0
    for split, rows in loaded.items():
        assert rows == [{c: r[c] for c in columns} for r in source if r["split"] == split]
