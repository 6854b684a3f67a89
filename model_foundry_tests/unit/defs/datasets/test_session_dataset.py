"""``model-foundry dataset sessions`` as a user runs it: a real process, a real DuckDB inbox of
agent sessions with planted secrets, the export loaded by datasets 3.6 and 5.x: the unit
tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from model_foundry.lib.publish import OutgoingEvent
from model_foundry_tests.shared.defs.datasets.session_dataset import (  # noqa: F401 - fixtures are found by name
    PLANTED,
    exported_fixture,
)

pytestmark = pytest.mark.timeout(600)

# What the sample sessions plant (devtools/sample_sessions.py), found in the raw events.


def _planted(events: list[OutgoingEvent]) -> set[str]:
    text = "\n".join(e.body.decode() for e in events)
    return {m for pattern in PLANTED for m in pattern.findall(text)}


def _every_text(folder: Path) -> str:
    """Every file of the export as text; Parquet files row by row."""
    parts = []
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".parquet":
            parts += [json.dumps(r, ensure_ascii=False) for r in pq.read_table(path).to_pylist()]
        elif path.is_file():
            parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts)


def test_no_planted_secret_is_left_anywhere_and_the_rest_is_kept(exported) -> None:
    planted = _planted(exported["first"])
    assert len(planted) >= 8
    text = _every_text(exported["folder"])
    assert [p for p in planted if p in text] == []
    assert "[REDACTED:" in text
    assert "def handle(batch)" in text and "coding agent" in text  # the rest of the text
    manifest = json.loads((exported["folder"] / "manifest.json").read_text())
    assert manifest["license"] == "mit" and sum(manifest["redactions_by_kind"].values()) > 0
    assert exported["folder"].name == datetime.now(UTC).strftime("%Y%m%d")


def test_no_session_or_near_duplicate_group_is_split_across_train_and_test(exported) -> None:
    rows = pq.read_table(exported["folder"] / "samples.parquet").to_pylist()
    for key in ("correlation_id", "cluster_id"):
        sides: dict[str, set[str]] = {}
        for r in rows:
            sides.setdefault(r[key], set()).add(r["split"])
        assert all(len(s) == 1 for s in sides.values()), key
    assert {r["split"] for r in rows if r["kept"]} == {"train", "test"}
