"""The export folder's views: OpenAI lines, the hf/ config that datasets 3.6 and 5.x load
offline, samples.parquet, the card and the manifest: the integration tests."""

from __future__ import annotations

import pytest

from model_foundry.devtools import hf_datasets
from model_foundry.lib.exports.layouts import SESSIONS
from model_foundry_tests.hf_loading import load_offline
from model_foundry_tests.shared.lib.exports.export_formats import (  # noqa: F401 - fixtures are found by name
    _kept,
    export_fixture,
)


@pytest.mark.parametrize("environment", list(hf_datasets.ENVIRONMENTS))
def test_datasets_loads_every_record_as_it_was_written(export, environment: str, tmp_path) -> None:
    folder, records = export
    result = load_offline(environment, folder, tmp_path / "hf")
    assert result["header"]["license"] == "unknown"
    loaded = result["loaded"]["sessions"]
    assert set(loaded) == {"train", "test"}
    columns = [f.name for f in SESSIONS.schema]
    for split, rows in loaded.items():
        assert rows == [{c: r[c] for c in columns} for r in _kept(records, split)]
    assert any(
        c for rows in loaded.values() for r in rows for m in r["messages"] for c in m["tool_calls"]
    )
