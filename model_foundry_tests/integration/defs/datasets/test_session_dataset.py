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

from model_foundry.devtools import hf_datasets
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import storage
from model_foundry.lib.datasets.layouts import SESSIONS
from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.publish import OutgoingEvent
from model_foundry_tests.hf_loading import load_offline
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


def _sessions_cli(data: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", "dataset", "sessions", *args],
        env=clean_env(MODEL_FOUNDRY_DUCKDB=str(db), MODEL_FOUNDRY_DATA_DIR=str(data)),
        capture_output=True,
        text=True,
        timeout=300,
    )


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


def test_a_finished_version_is_refused_in_one_sentence(exported) -> None:
    version = exported["folder"].name
    done = _sessions_cli(exported["data"], exported["db"], "--name", "agents", "--version", version)
    assert done.returncode != 0
    assert "already exported" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_splits_stay_put_when_the_inbox_grows(exported) -> None:
    before = pq.read_table(exported["folder"] / "samples.parquet").to_pylist()
    _store(exported["db"], list(sample_events(300, sessions=6, seed=8)), 10_000)
    done = _sessions_cli(exported["data"], exported["db"], "--name", "agents")
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.splitlines()[0])
    assert folder.name == exported["folder"].name + ".2"
    after = {r["id"]: r for r in pq.read_table(folder / "samples.parquet").to_pylist()}
    assert len(after) > len(before)
    for r in before:
        assert after[r["id"]]["split"] == r["split"], r["id"]


@pytest.mark.parametrize("environment", list(hf_datasets.ENVIRONMENTS))
def test_datasets_loads_the_export_with_tool_calls_intact(exported, environment, tmp_path) -> None:
    folder = exported["folder"]
    result = load_offline(environment, folder, tmp_path / "hf")
    assert result["header"]["license"] == "mit"
    source = pq.read_table(folder / "samples.parquet").to_pylist()
    columns = [f.name for f in SESSIONS.schema]
    for split, rows in result["loaded"]["sessions"].items():
        wanted = [{c: r[c] for c in columns} for r in source if r["kept"] and r["split"] == split]
        assert rows == wanted, split
    calls = [c for rows in result["loaded"]["sessions"].values() for r in rows
             for m in r["messages"] for c in m["tool_calls"]]  # fmt: skip
    assert calls and all(json.loads(c["function"]["arguments"]) is not None for c in calls)
