"""``make demo`` when every slot rejects every request: counts and causes, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from model_foundry_tests.pipeline_helpers import clean_env, slot_simulator_process

pytestmark = pytest.mark.timeout(600)


def test_demo_with_slots_that_reject_everything_prints_causes_not_a_traceback(
    tmp_path: Path,
) -> None:
    with slot_simulator_process(
        tmp_path / "sim", speed=50, extra_args=("--error-rate", "1", "--error-status", "400")
    ) as slots:
        result = subprocess.run(
            [sys.executable, "-m", "model_foundry.cli", "demo", "--events", "40"],
            env=clean_env(MODEL_FOUNDRY_DATA_DIR=str(tmp_path / "data"),
                          MODEL_FOUNDRY_SLOTS=str(slots)),
            capture_output=True,
            text=True,
            timeout=540,
        )  # fmt: skip
    out = result.stdout
    assert result.returncode == 0, out[-2000:] + result.stderr[-3000:]
    assert "Traceback" not in out + result.stderr
    # No summary was written, so nothing was there to translate.
    assert "session_summaries: 0 written" in out
    assert "session_summary_translations: 0 written (none pending)" in out
    assert "failed: slot kindergarten answered HTTP 400: simulated server error" in out
    lines = out.splitlines()
    dataset = next(i for i, line in enumerate(lines) if line.startswith("dataset collection"))
    assert lines[dataset + 1].strip().startswith("0 samples written from ")
    assert "requests failed" in lines[dataset + 1]
    assert lines[dataset + 2].strip().endswith("answered HTTP 400: simulated server error")
