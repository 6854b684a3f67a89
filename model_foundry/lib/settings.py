"""Every environment variable model-foundry reads, with the defaults a fresh checkout uses.

This is the only module that looks at ``os.environ``. Secrets (NATS credentials, slot API
keys) are special: the code location hands them to resources as ``dg.EnvVar`` so Dagster
shows only their names; :func:`secret` is for code that runs outside Dagster (the CLI, the
slot client) and needs the value itself.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
PROJECT_ROOT = PACKAGE_DIR.parent
DEFAULT_DATA_DIR = PROJECT_ROOT / "data"
SHIPPED_SLOT_FILE = PACKAGE_DIR / "slots.yaml"

# Credentials and where they go on the NATS resource; values never leave this process
# except as dg.EnvVar names.
NATS_SECRET_VARS: dict[str, str] = {
    "user": "NATS_USER",
    "password": "NATS_PASSWORD",
    "token": "NATS_TOKEN",
    "creds_file": "NATS_CREDS",
    "tls_ca": "NATS_TLS_CA",
}


def _get(name: str, default: str = "") -> str:
    return os.environ.get(name, "").strip() or default


def is_set(name: str) -> bool:
    return bool(_get(name))


def secret(name: str) -> str | None:
    """The value of a secret variable, for code outside Dagster; None when unset."""
    return _get(name) or None


def data_dir() -> Path:
    """Home of the DuckDB file, the local NATS store, prompt sources and exported datasets."""
    return Path(_get("MODEL_FOUNDRY_DATA_DIR", str(DEFAULT_DATA_DIR)))


def duckdb_path() -> Path:
    return Path(_get("MODEL_FOUNDRY_DUCKDB", str(data_dir() / "model_foundry.duckdb")))


def dagster_home() -> Path:
    return Path(_get("DAGSTER_HOME", str(data_dir() / "dagster_home")))


def nats_url_set() -> bool:
    return is_set("NATS_URL")


def nats_urls() -> list[str]:
    """Servers from ``NATS_URL`` (comma-separated); the local server ``make up`` starts if unset."""
    raw = _get("NATS_URL")
    if not raw:
        return ["nats://127.0.0.1:4222"]
    return [u.strip() for u in raw.split(",") if u.strip()]


def nats_url_has_userinfo() -> bool:
    """Whether ``NATS_URL`` carries credentials (``nats://user:password@host``, or a token).

    The code location then hands Dagster the variable's name instead of the URL, so the
    password never shows in the UI or the run storage."""
    for url in nats_urls():
        rest = url.partition("://")[2] or url
        if "@" in rest.split("/", 1)[0]:
            return True
    return False


def nats_secret_vars_set() -> dict[str, str]:
    """Resource field -> variable name, for the NATS credential variables a user set."""
    return {field: var for field, var in NATS_SECRET_VARS.items() if is_set(var)}


def slot_file_set() -> bool:
    return is_set("MODEL_FOUNDRY_SLOTS")


def slot_file_path() -> Path:
    """The slot file: ``MODEL_FOUNDRY_SLOTS`` or the shipped example in the package."""
    raw = _get("MODEL_FOUNDRY_SLOTS")
    return Path(raw) if raw else SHIPPED_SLOT_FILE


def profile_set() -> bool:
    return is_set("MODEL_FOUNDRY_PROFILE")


def profile() -> str:
    return _get("MODEL_FOUNDRY_PROFILE", "standard")


DEFAULT_DUCKDB_LOCK_TIMEOUT_S = 120.0


class SettingError(ValueError):
    """A variable holds a value model-foundry cannot use; the message names it."""


def duckdb_lock_timeout_s() -> float:
    """How long a DuckDB writer or reader waits for another process to release the file."""
    raw = _get("MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT")
    if not raw:
        return DEFAULT_DUCKDB_LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise SettingError(
            f"MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT={raw!r} is not a positive number of seconds"
        )
    return value


def ingest_memory_limit() -> str:
    """DuckDB memory_limit of the inbox drain's writer."""
    return _get("MODEL_FOUNDRY_INGEST_MEMORY_LIMIT", "64MB")


def sensor_interval_s() -> int:
    return int(_get("MODEL_FOUNDRY_SENSOR_INTERVAL_S", "15"))


def stale_run_s() -> float:
    """Silence after which a STARTED inbox run whose worker cannot be checked counts as dead."""
    return float(_get("MODEL_FOUNDRY_STALE_RUN_S", "600"))


def dead_letter_max_share() -> float:
    return float(_get("MODEL_FOUNDRY_DEAD_LETTER_MAX_SHARE", "0.05"))


DEFAULT_DATASET_CRON = "0 3 * * *"


def dataset_cron() -> str:
    return _get("MODEL_FOUNDRY_DATASET_CRON", DEFAULT_DATASET_CRON)


def timezone() -> str:
    return _get("MODEL_FOUNDRY_TIMEZONE", "UTC")
