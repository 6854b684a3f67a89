"""`model-foundry up`'s choice of Dagster storage: SQLite by default, PostgreSQL by variables:
the integration tests."""

from __future__ import annotations

import pytest

from model_foundry.devtools.ports import free_port
from model_foundry.lib.dagster_instance import (
    DagsterStorageError,
    check_reachable,
)
from model_foundry.lib.settings import DagsterPostgres

SECRET = "pw-never-written-91c2"


def test_unreachable_or_misspelled_storage_is_one_sentence_without_the_password() -> None:
    port = free_port()
    pg = DagsterPostgres(False, "127.0.0.1", port, "postgres", "dagster", password_set=True)
    with pytest.raises(DagsterStorageError) as err:
        check_reachable(pg, None, SECRET)
    message = str(err.value)
    assert f"127.0.0.1:{port}/dagster" in message and "DAGSTER_PG_HOST" in message
    assert SECRET not in message and "\n" not in message
    url_pg = DagsterPostgres(True, "", 5432, "", "", False, url_scheme="postgresql")
    with pytest.raises(DagsterStorageError, match=r"postgresql\+psycopg2://"):
        check_reachable(url_pg, f"postgresql://u:{SECRET}@127.0.0.1/db", None)
