"""The drain when storing fails: no message leaves the queue without a row or a dead letter:
the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest


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
