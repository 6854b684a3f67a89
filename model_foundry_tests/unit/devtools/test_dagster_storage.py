"""`model-foundry up`'s choice of Dagster storage: SQLite by default, PostgreSQL by variables:
the unit tests."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml

from model_foundry.devtools import devstack
from model_foundry.lib import settings
from model_foundry.lib.dagster_instance import (
    storage_section,
)
from model_foundry.lib.settings import DagsterPostgres

SECRET = "pw-never-written-91c2"


def test_a_fresh_machine_gets_sqlite_in_dagster_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    home = devstack._dagster_home()
    out = capsys.readouterr().out
    assert "Dagster storage: SQLite in" in out
    config = yaml.safe_load((home / "dagster.yaml").read_text())
    assert "storage" not in config  # Dagster's own default: SQLite under DAGSTER_HOME
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"


def test_storage_section_references_variables_and_never_holds_values() -> None:
    pg = DagsterPostgres(False, "db.lab", 5433, "dagster", "runs", password_set=True)
    section = storage_section(pg)["postgres"]["postgres_db"]
    assert section["hostname"] == {"env": "DAGSTER_PG_HOST"}
    assert section["password"] == {"env": "DAGSTER_PG_PASSWORD"}
    assert (section["port"], section["username"], section["db_name"]) == (5433, "dagster", "runs")
    no_password = storage_section(DagsterPostgres(False, "h", 5432, "u", "d", False))
    assert "password" not in no_password["postgres"]["postgres_db"]
    url = storage_section(DagsterPostgres(True, "", 5432, "", "", False))
    assert url == {"postgres": {"postgres_url": {"env": "DAGSTER_PG_URL"}}}
    assert storage_section(None) == {}


def test_settings_choose_postgresql_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings.dagster_postgres() is None
    monkeypatch.setenv("DAGSTER_PG_HOST", "db.lab")
    pg = settings.dagster_postgres()
    assert pg is not None and (pg.host, pg.port, pg.user, pg.db) == (
        "db.lab",
        5432,
        "postgres",
        "dagster",
    )
