"""The exporter answers while another process holds the DuckDB file for writing.

What the unit, integration and system tests of ``test_metrics_exporter.py`` share."""

from __future__ import annotations

import json

from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.inbox.store import write_batch

WRITER = """
import sys
from model_foundry.lib import storage
from model_foundry_tests.shared.metrics_exporter import events, insert
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
