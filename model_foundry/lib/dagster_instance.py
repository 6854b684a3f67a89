"""Dagster's own storage (runs, event log, schedules, sensor cursors): SQLite or PostgreSQL.

SQLite under ``$DAGSTER_HOME`` is the embedded default, so ``make up`` works on a fresh
machine. Setting ``DAGSTER_PG_HOST`` (with ``DAGSTER_PG_PORT``, ``DAGSTER_PG_USER``,
``DAGSTER_PG_DB`` and, if the server wants one, ``DAGSTER_PG_PASSWORD``) or one
``DAGSTER_PG_URL`` puts it on PostgreSQL with ``dagster-postgres`` instead, which every
daemon, webserver and run worker on every machine can share.

:func:`storage_section` writes the ``storage:`` part of ``dagster.yaml`` with ``{env: ...}``
references: Dagster reads the values when it starts, so no password (nor a URL, which may
hold one) is ever written into the file or shown in the UI, which displays the file.
"""

from __future__ import annotations

from typing import Any

from model_foundry.lib.settings import DagsterPostgres

# SQLAlchemy 2.1 maps plain postgresql:// to the psycopg 3 driver; dagster-postgres installs
# psycopg2, so the scheme names it.
PG_SCHEME = "postgresql+psycopg2"


class DagsterStorageError(RuntimeError):
    """Dagster's PostgreSQL storage is misconfigured or unreachable; one sentence."""


def storage_section(pg: DagsterPostgres | None, sqlite_dir: str | None = None) -> dict[str, Any]:
    """The ``storage:`` value for ``dagster.yaml``: PostgreSQL from ``pg``, else SQLite."""
    if pg is None:
        return {"sqlite": {"base_dir": sqlite_dir}} if sqlite_dir else {}
    if pg.url_set:
        return {"postgres": {"postgres_url": {"env": "DAGSTER_PG_URL"}}}
    db: dict[str, Any] = {
        "hostname": {"env": "DAGSTER_PG_HOST"},
        "port": pg.port,
        "username": pg.user,
        "db_name": pg.db,
        "scheme": PG_SCHEME,
    }
    if pg.password_set:
        db["password"] = {"env": "DAGSTER_PG_PASSWORD"}
    return {"postgres": {"postgres_db": db}}


def describe(pg: DagsterPostgres | None, home: str) -> str:
    """One line for ``model-foundry up``: which storage, where, and never a password."""
    if pg is None:
        return (
            f"Dagster storage: SQLite in {home} (set DAGSTER_PG_HOST or DAGSTER_PG_URL for "
            "PostgreSQL, see docs/scaling.md)"
        )
    password = " (password from DAGSTER_PG_PASSWORD)" if pg.password_set else ""
    return f"Dagster storage: {pg.describe()}{password}"


def connection_url(pg: DagsterPostgres, url: str | None, password: str | None) -> str:
    """A SQLAlchemy URL for a reachability check; built here, never printed."""
    if pg.url_set and url:
        return url
    from sqlalchemy.engine import URL

    return URL.create(
        PG_SCHEME,
        username=pg.user,
        password=password or None,
        host=pg.host,
        port=pg.port,
        database=pg.db,
    ).render_as_string(hide_password=False)


def check_reachable(pg: DagsterPostgres, url: str | None, password: str | None) -> None:
    """Connect once with a short timeout; a failure is one sentence naming the variables."""
    if pg.url_set and pg.url_scheme in ("postgresql", "postgres"):
        raise DagsterStorageError(
            f"DAGSTER_PG_URL starts with {pg.url_scheme}://; write {PG_SCHEME}:// so "
            "SQLAlchemy uses the psycopg2 driver that dagster-postgres installs"
        )
    import sqlalchemy

    engine = sqlalchemy.create_engine(
        connection_url(pg, url, password), connect_args={"connect_timeout": 5}
    )
    try:
        with engine.connect() as con:
            con.execute(sqlalchemy.text("SELECT 1"))
    except sqlalchemy.exc.SQLAlchemyError as exc:
        cause = str(getattr(exc, "orig", exc) or exc).strip().splitlines()
        where = "the URL in DAGSTER_PG_URL" if pg.url_set else pg.describe()
        raise DagsterStorageError(
            f"cannot use Dagster's storage at {where} ({cause[0] if cause else 'no answer'}); "
            "check DAGSTER_PG_HOST, DAGSTER_PG_PORT, DAGSTER_PG_USER, DAGSTER_PG_PASSWORD and "
            "DAGSTER_PG_DB (or DAGSTER_PG_URL), and that the database exists (createdb)"
        ) from None
    finally:
        engine.dispose()


__all__ = [
    "PG_SCHEME",
    "DagsterStorageError",
    "check_reachable",
    "connection_url",
    "describe",
    "storage_section",
]
