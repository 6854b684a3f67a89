"""The drain when storing fails: no message leaves the queue without a row or a dead letter:
the system tests."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.storage import DuckDBBusyError
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, publish
from model_foundry_tests.shared.lib.inbox.drain import (  # noqa: F401 - fixtures are found by name
    counts,
    drain,
    impatient_fixture,
    tool_event,
)


@pytest.fixture
def locked_db(db_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the DuckDB file open for writing, as a long query would."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
            "print('holding', flush=True); time.sleep(120)",
            str(db_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    yield holder
    holder.kill()
    holder.wait()


@BOTH_NATS_LINES
def test_a_file_locked_past_the_lock_timeout_keeps_every_message_in_the_queue(
    nats_server: LocalNatsServer,
    db_path: Path,
    locked_db: subprocess.Popen[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT", "0.5")
    # One delivery allowed: a consumer with a finite max_deliver would drop them after it.
    impatient = NatsClient(servers=nats_server.url, ack_wait_s=1.0, max_deliver=1)
    publish(impatient, [tool_event(f"e{i}") for i in range(5)])

    # More failed deliveries than the budget: a busy file is no reason to give a message up.
    for _ in range(impatient.max_deliver + 1):
        started = time.monotonic()
        with pytest.raises(DuckDBBusyError, match="MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT") as failed:
            drain(impatient, db_path)
        assert time.monotonic() - started < 30  # the variable is read: not the 120 s default
        assert f"PID {locked_db.pid}" in str(failed.value)
        assert sum(counts(impatient)) == 5
        time.sleep(impatient.ack_wait_s + 0.5)
    locked_db.kill()
    locked_db.wait()

    record = drain(impatient, db_path)
    assert (record.inserted, record.dead_lettered) == (5, 0)
    assert counts(impatient) == (0, 0)
