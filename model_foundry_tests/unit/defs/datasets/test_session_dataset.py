"""``model-foundry dataset sessions`` as a user runs it: a real process, a real DuckDB inbox
of agent sessions with planted secrets, the export loaded by datasets 3.6 and 5.x."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import storage
from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.publish import OutgoingEvent
from model_foundry_tests.pipeline_helpers import clean_env

pytestmark = pytest.mark.timeout(600)

# What the sample sessions plant (devtools/sample_sessions.py), found in the raw events.
PLANTED = [
    re.compile(p)
    for p in (
        r"ghp_[A-Za-z0-9]{36}",
        r"sk-proj-[A-Za-z0-9]{40}",
        r"AKIA[A-Z2-7]{16}",
        r"hf_[A-Za-z0-9]{34}",
        r"(?<=postgres://lab:)[a-z0-9]{14}",
        r"[a-z.]+@labmail\.net",
        r"10\.\d+\.\d+\.\d+",
        r"(?<=/home/)[a-z]+",
    )
]


def _store(db: Path, events: list[OutgoingEvent], first_seq: int) -> None:
    parsed = [
        validate_message(e.subject, e.body, first_seq + n, datetime.now(UTC))
        for n, e in enumerate(events)
    ]
    assert all(isinstance(p, InboxEvent) for p in parsed)
    storage.run_in_transaction(db, lambda con: write_batch(con, "EVENTS", parsed, []))


def _planted(events: list[OutgoingEvent]) -> set[str]:
    text = "\n".join(e.body.decode() for e in events)
    return {m for pattern in PLANTED for m in pattern.findall(text)}


def _sessions_cli(data: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", "dataset", "sessions", *args],
        env=clean_env(MODEL_FOUNDRY_DUCKDB=str(db), MODEL_FOUNDRY_DATA_DIR=str(data)),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _every_text(folder: Path) -> str:
    """Every file of the export as text; Parquet files row by row."""
    parts = []
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".parquet":
            parts += [json.dumps(r, ensure_ascii=False) for r in pq.read_table(path).to_pylist()]
        elif path.is_file():
            parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = tmp_path_factory.mktemp("data")
    db = data / "foundry.duckdb"
    first = list(sample_events(600, sessions=12, seed=5))
    _store(db, first, 1)
    done = _sessions_cli(data, db, "--name", "agents", "--license", "mit", "--test-share", "0.3")
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.splitlines()[0])
    return {"data": data, "db": db, "first": first, "folder": folder, "stdout": done.stdout}


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
