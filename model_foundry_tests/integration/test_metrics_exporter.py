"""The exporter answers while another process holds the DuckDB file for writing."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.inbox.store import write_batch
from model_foundry_tests.pipeline_helpers import clean_env

pytestmark = pytest.mark.timeout(120)

# A writer like a drain mid-run: it commits a batch and keeps the file open until told to stop.
WRITER = """
import sys
from model_foundry.lib import storage
from model_foundry_tests.system.test_metrics_exporter import events, insert
with storage.connect(sys.argv[1]) as con:
    insert(con, events(3, 5))
    print("holding", flush=True)
    sys.stdin.read()
"""


def events(first: int, last: int) -> list[InboxEvent]:
    out = []
    for i in range(first, last):
        body = {
            "event_id": f"e{i}",
            "correlation_id": "s1",
            "payload": {"tool": "t", "arguments": {}},
        }
        checked = validate_message("llm.tool_call", json.dumps(body).encode(), i + 1)
        assert isinstance(checked, InboxEvent)
        out.append(checked)
    return out


def insert(con: object, batch: list[InboxEvent]) -> None:
    con.execute("BEGIN")  # type: ignore[attr-defined]
    write_batch(con, "PIPELINE_EVENTS", batch, [])  # type: ignore[arg-type]
    con.execute("COMMIT")  # type: ignore[attr-defined]


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
