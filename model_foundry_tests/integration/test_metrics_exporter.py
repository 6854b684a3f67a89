"""The exporter answers while another process holds the DuckDB file for writing: the
integration tests."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from model_foundry_tests.pipeline_helpers import clean_env

pytestmark = pytest.mark.timeout(120)

# A writer like a drain mid-run: it commits a batch and keeps the file open until told to stop.


def test_a_taken_port_is_one_sentence_not_a_traceback(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "model_foundry.cli",
                "metrics",
                "--no-nats",
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(MODEL_FOUNDRY_DATA_DIR=str(tmp_path / "data")),
        )
    assert result.returncode == 1
    assert result.stderr.strip().startswith(
        f"model-foundry: cannot serve metrics on 127.0.0.1:{port}"
    )
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
