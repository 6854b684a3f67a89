"""``model-foundry dataset sessions`` as a user runs it: a real process, a real DuckDB inbox
of agent sessions with planted secrets, the export loaded by datasets 3.6 and 5.x.

What the unit, integration and system tests of ``defs/datasets/test_session_dataset.py`` share."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import storage
from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.publish import OutgoingEvent
from model_foundry_tests.pipeline_helpers import clean_env

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


@pytest.fixture(name="exported", scope="module")
def exported_fixture(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = tmp_path_factory.mktemp("data")
    db = data / "foundry.duckdb"
    first = list(sample_events(600, sessions=12, seed=5))
    _store(db, first, 1)
    done = _sessions_cli(data, db, "--name", "agents", "--license", "mit", "--test-share", "0.3")
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.splitlines()[0])
    return {"data": data, "db": db, "first": first, "folder": folder, "stdout": done.stdout}
