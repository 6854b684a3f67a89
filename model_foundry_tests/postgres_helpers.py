"""A PostgreSQL database of the test's own for Dagster's storage: created, then dropped.

The development and CI machines run PostgreSQL at 127.0.0.1:5432 with trust auth. Where
none answers, a test that needs it skips saying why, except under ``CI=true``, where it
fails: CI must not pass without having run Dagster on PostgreSQL.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from model_foundry.lib.settings import DagsterPostgres

PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_USER = "postgres"


def _connect(dbname: str = "postgres"):  # type: ignore[no-untyped-def]
    import psycopg2

    return psycopg2.connect(
        host=PG_HOST, port=PG_PORT, user=PG_USER, dbname=dbname, connect_timeout=5
    )


def require_postgres() -> None:
    try:
        _connect().close()
    except Exception as exc:
        reason = (
            f"no PostgreSQL at {PG_USER}@{PG_HOST}:{PG_PORT} "
            f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__})"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI needs it for Dagster's PostgreSQL storage")
        pytest.skip(reason)


@contextmanager
def throwaway_database(prefix: str = "mf_test") -> Iterator[DagsterPostgres]:
    """A fresh database, dropped afterwards even if sessions are still connected to it."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    admin = _connect()
    admin.autocommit = True
    try:
        with admin.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
        yield DagsterPostgres(
            url_set=False,
            host=PG_HOST,
            port=PG_PORT,
            user=PG_USER,
            db=name,
            password_set=False,
        )
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def database_exists(name: str) -> bool:
    con = _connect()
    try:
        with con.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            return cur.fetchone() is not None
    finally:
        con.close()


def database_text(dbname: str) -> dict[str, str]:
    """Every text and JSON column of every table of ``dbname``, one text per table:
    what a search of a Dagster storage on PostgreSQL for values that must not be there reads
    (event_logs, runs, asset_keys, the checks' and the daemons' tables alike)."""
    from psycopg2 import sql

    con = _connect(dbname)
    try:
        with con.cursor() as cur:
            cur.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = 'public' AND data_type IN "
                "('text', 'character varying', 'json', 'jsonb')"
            )
            columns: dict[str, list[str]] = {}
            for table, column in cur.fetchall():
                columns.setdefault(table, []).append(column)
            texts = {}
            for table, names in sorted(columns.items()):
                cur.execute(
                    sql.SQL("SELECT {} FROM {}").format(
                        sql.SQL(", ").join(
                            sql.SQL("{}::text").format(sql.Identifier(n)) for n in names
                        ),
                        sql.Identifier(table),
                    )
                )
                texts[f"postgres {dbname}.{table}"] = "\n".join(
                    " ".join(v for v in row if v is not None) for row in cur.fetchall()
                )
            return texts
    finally:
        con.close()


def pg_env(pg: DagsterPostgres, password: str | None = None) -> dict[str, str]:
    """The variables a Dagster process needs to find ``pg`` (trust auth ignores a password)."""
    env = {
        "DAGSTER_PG_HOST": pg.host,
        "DAGSTER_PG_PORT": str(pg.port),
        "DAGSTER_PG_USER": pg.user,
        "DAGSTER_PG_DB": pg.db,
    }
    if password:
        env["DAGSTER_PG_PASSWORD"] = password
    return env
