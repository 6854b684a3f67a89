"""Dataset collection with two roles on one slot, duplicate prompts, and slots that reject all:
the system tests."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_foundry_tests.pipeline_helpers import clean_env, count, slot_simulator_process

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def rejecting_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # Every request to every slot is answered with HTTP 400.
    with slot_simulator_process(
        tmp_path_factory.mktemp("reject-sim"),
        speed=50,
        extra_args=("--error-rate", "1", "--error-status", "400"),
    ) as path:
        yield path


def collect_cli(
    db: Path, slots: Path, prompt_dir: Path, data_dir: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "-m", "model_foundry.cli", "dataset", "collect", "--name", "ds",
            "--version", "v1", "--prompt-dir", str(prompt_dir), "--no-chat-sessions", *args,
        ],
        env=clean_env(
            MODEL_FOUNDRY_DUCKDB=str(db),
            MODEL_FOUNDRY_SLOTS=str(slots),
            MODEL_FOUNDRY_DATA_DIR=str(data_dir),
        ),
        capture_output=True,
        text=True,
        timeout=240,
    )  # fmt: skip


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Pure


# ---------------------------------------------------------------------------------------------
# Through the CLI


def test_two_roles_on_one_slot_give_a_sample_each_and_duplicates_are_counted(
    tmp_path: Path, fast_slots: Path
) -> None:
    prompt_dir = tmp_path / "prompts"
    write_jsonl(prompt_dir / "a.jsonl", [{"id": f"p{i}", "prompt": f"words {i}"} for i in range(3)])
    # The same text as p0 under another id, in another file.
    write_jsonl(prompt_dir / "b.jsonl", [{"id": "again", "prompt": "words 0"}])
    db = tmp_path / "data" / "ds.duckdb"
    done = collect_cli(db, fast_slots, prompt_dir, tmp_path / "data", "--roles", "summary",
                       "kindergarten")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    lines = done.stdout.strip().splitlines()
    meta = json.loads(lines[-1])
    assert meta["prompts"] == 3 and meta["prompts_read"] == 4
    assert meta["duplicate_prompts_dropped"] == 1
    assert meta["samples_written"] == 6 and meta["failed"] == 0
    assert meta["samples_by_role"] == {"kindergarten": 3, "summary": 3}
    assert meta["failure_causes"] == {}
    assert lines[-2] == (
        "6 samples written from 3 distinct prompts (1 duplicates dropped) x 2 roles "
        "(kindergarten: 3, summary: 3); 0 requests failed, 0 truncated"
    )
    # The run log says once which prompt was dropped.
    log = done.stdout + done.stderr
    assert log.count("dropped 1 duplicate prompt(s)") == 1
    assert "again (file:b.jsonl) = p0 (file:a.jsonl)" in log
    assert count(db, "SELECT count(DISTINCT role) FROM dataset_samples") == 2
    assert count(db, "SELECT count(*) FROM dataset_samples WHERE prompt_id = 'again'") == 0


def test_slots_that_reject_everything_give_counted_causes_not_a_traceback(
    tmp_path: Path, rejecting_slots: Path
) -> None:
    prompt_dir = tmp_path / "prompts"
    write_jsonl(prompt_dir / "a.jsonl", [{"id": f"p{i}", "prompt": f"words {i}"} for i in range(4)])
    done = collect_cli(tmp_path / "data" / "ds.duckdb", rejecting_slots, prompt_dir,
                       tmp_path / "data")  # fmt: skip
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    meta = json.loads(lines[-1])
    assert meta["samples_written"] == 0 and meta["failed"] == 8
    # Each role's slot (kindergarten, naughty) rejected its four requests; one sentence each.
    assert meta["failure_causes"] == {
        "slot kindergarten answered HTTP 400: simulated server error": 4,
        "slot naughty answered HTTP 400: simulated server error": 4,
    }
    assert lines[-3:-1] == [
        "  4 failed: slot kindergarten answered HTTP 400: simulated server error",
        "  4 failed: slot naughty answered HTTP 400: simulated server error",
    ]
    assert lines[-4].startswith("0 samples written from 4 distinct prompts")
