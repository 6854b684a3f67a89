"""Every environment variable model-foundry reads, with the defaults a fresh checkout uses.

This is the only module that looks at ``os.environ``. Secrets (NATS credentials, slot API
keys) are special: the code location hands them to resources as ``dg.EnvVar`` so Dagster
shows only their names; :func:`secret` is for code that runs outside Dagster (the CLI, the
slot client) and needs the value itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
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


def hygiene_file() -> Path:
    """The hygiene file (extra secret rules, an allowlist, PII switches); absent: defaults."""
    return data_dir() / "hygiene.yaml"


def hygiene_salt_file() -> Path:
    """This installation's key for the hashes that stand in for user names in home paths."""
    return data_dir() / "hygiene.salt"


def eval_sets_file() -> Path | None:
    """The evaluation-sets file exports are checked against (``MODEL_FOUNDRY_EVAL_SETS``);
    None: unset, nothing is checked."""
    raw = _get("MODEL_FOUNDRY_EVAL_SETS")
    return Path(raw) if raw else None


def decontamination_dir() -> Path:
    """Where the evaluation sets' n-gram indexes are kept, one file per eval file version."""
    return data_dir() / "decontamination"


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


def downstream_memory_limit() -> str | None:
    """DuckDB memory_limit of the downstream steps' writer (typed tables, summaries'
    pending reads); unset: DuckDB's own (80% of the machine's memory)."""
    return _get("MODEL_FOUNDRY_DOWNSTREAM_MEMORY_LIMIT") or None


def sensor_interval_s() -> int:
    return int(_get("MODEL_FOUNDRY_SENSOR_INTERVAL_S", "15"))


def stale_run_s() -> float:
    """Silence after which a STARTED inbox run whose worker cannot be checked counts as dead."""
    return float(_get("MODEL_FOUNDRY_STALE_RUN_S", "600"))


def dead_letter_max_share() -> float:
    return float(_get("MODEL_FOUNDRY_DEAD_LETTER_MAX_SHARE", "0.05"))


def export_workers() -> int | None:
    """Processes an export scrubs records in (``MODEL_FOUNDRY_EXPORT_WORKERS``; 0: in the
    export's own process); None when unset: one a core, at most 8."""
    raw = _get("MODEL_FOUNDRY_EXPORT_WORKERS")
    if not raw:
        return None
    if not raw.isdigit() or int(raw) > 64:
        raise SettingError(f"MODEL_FOUNDRY_EXPORT_WORKERS={raw!r} is not a number from 0 to 64")
    return int(raw)


DEFAULT_EXPORT_MAX_HELD_BACK_SHARE = 0.5


def export_max_held_back_share() -> float:
    """The share of an export's records left out of its views (duplicates, filtered, held
    back by a gate) above which the export's blocking check fails."""
    raw = _get("MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE", str(DEFAULT_EXPORT_MAX_HELD_BACK_SHARE))
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise SettingError(
            f"MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE={raw!r} is not a share between 0 and 1"
        )
    return value


DEFAULT_ROUTING_WINDOW_SESSIONS = 20


def routing_window_sessions() -> int:
    """How many of the newest sessions the routing check looks at for an idle live slot."""
    raw = _get("MODEL_FOUNDRY_ROUTING_WINDOW_SESSIONS", str(DEFAULT_ROUTING_WINDOW_SESSIONS))
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(
            f"MODEL_FOUNDRY_ROUTING_WINDOW_SESSIONS={raw!r}: must be a whole number of "
            "sessions, 1 or more"
        )
    return value


DEFAULT_DATASET_CRON = "0 3 * * *"


def dataset_cron() -> str:
    return _get("MODEL_FOUNDRY_DATASET_CRON", DEFAULT_DATASET_CRON)


def recipes_dir() -> Path:
    """Where users' recipes live: the code location's defs folder, as `dg scaffold defs` writes."""
    return PACKAGE_DIR / "defs"


def recipe_examples_dir() -> Path:
    """The shipped example recipes, loaded into Dagster only when enabled."""
    return PROJECT_ROOT / "examples" / "recipes"


def recipe_examples() -> bool:
    """Whether the shipped example recipes join the code location
    (MODEL_FOUNDRY_RECIPE_EXAMPLES; the CLI finds them either way)."""
    raw = _get("MODEL_FOUNDRY_RECIPE_EXAMPLES", "false").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"MODEL_FOUNDRY_RECIPE_EXAMPLES={raw!r}: must be true or false")


def dataset_judge() -> bool:
    """Whether the nightly collection has its answers judged (MODEL_FOUNDRY_DATASET_JUDGE)."""
    raw = _get("MODEL_FOUNDRY_DATASET_JUDGE", "false").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"MODEL_FOUNDRY_DATASET_JUDGE={raw!r}: must be true or false")


DEFAULT_SESSION_IDLE_MINUTES = 30.0


def session_idle_minutes() -> float:
    """How long a session's last event must be past before a dataset export takes it."""
    raw = _get("MODEL_FOUNDRY_SESSION_IDLE_MINUTES", str(DEFAULT_SESSION_IDLE_MINUTES))
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0:
        raise ValueError(
            f"MODEL_FOUNDRY_SESSION_IDLE_MINUTES={raw!r}: must be a number of minutes, 0 or more"
        )
    return value


def timezone() -> str:
    return _get("MODEL_FOUNDRY_TIMEZONE", "UTC")


def telemetry_url() -> str | None:
    """Vector's ``http_server`` source for telemetry events; None (unset) sends nothing."""
    return _get("MODEL_FOUNDRY_TELEMETRY_URL") or None


DEFAULT_METRICS_PORT = 9640


def metrics_port() -> int:
    """Port of the Prometheus exporter that ``make up`` starts (``model-foundry metrics``)."""
    return int(_get("MODEL_FOUNDRY_METRICS_PORT", str(DEFAULT_METRICS_PORT)))


# ---------------------------------------------------------------------------------------------
# Past one machine: the slot limiter and Dagster's storage.

SLOT_LIMITERS = ("auto", "nats", "flock")


def slot_limiter() -> str:
    """``auto``: NATS leases when ``NATS_URL`` is set and reachable, else flock; or ``nats``,
    ``flock``."""
    value = _get("MODEL_FOUNDRY_SLOT_LIMITER", "auto").lower()
    if value not in SLOT_LIMITERS:
        raise ValueError(
            f"MODEL_FOUNDRY_SLOT_LIMITER={value!r}: must be one of {', '.join(SLOT_LIMITERS)}"
        )
    return value


def slot_leases_wanted() -> bool:
    """Whether slot limits go through NATS: asked for, or ``auto`` with ``NATS_URL`` set (never
    a stranger's server on the default port because nothing was configured)."""
    limiter = slot_limiter()
    return limiter == "nats" or (limiter == "auto" and nats_url_set())


def slot_lease_ttl_s() -> float:
    """How long an unrenewed slot lease lasts before a waiting worker may take its place."""
    return float(_get("MODEL_FOUNDRY_SLOT_LEASE_TTL_S", "30"))


def nats_replicas() -> int:
    """Replicas of the slot lease bucket when it is created (3 on a 3-node NATS cluster)."""
    return int(_get("MODEL_FOUNDRY_NATS_REPLICAS", "1"))


# The variables naming Dagster's PostgreSQL storage; the password is only ever referenced.
DAGSTER_PG_VARS = (
    "DAGSTER_PG_URL",
    "DAGSTER_PG_HOST",
    "DAGSTER_PG_PORT",
    "DAGSTER_PG_USER",
    "DAGSTER_PG_PASSWORD",
    "DAGSTER_PG_DB",
)


@dataclass(frozen=True)
class DagsterPostgres:
    """Where Dagster's PostgreSQL storage is, without the password (its variable is named)."""

    url_set: bool
    host: str
    port: int
    user: str
    db: str
    password_set: bool
    url_scheme: str = ""

    def describe(self) -> str:
        if self.url_set:
            return "PostgreSQL at the URL in DAGSTER_PG_URL"
        return f"PostgreSQL {self.user}@{self.host}:{self.port}/{self.db}"


def dagster_postgres() -> DagsterPostgres | None:
    """PostgreSQL storage when ``DAGSTER_PG_URL`` or ``DAGSTER_PG_HOST`` is set, else None."""
    url = _get("DAGSTER_PG_URL")
    if not url and not is_set("DAGSTER_PG_HOST"):
        return None
    return DagsterPostgres(
        url_set=bool(url),
        host=_get("DAGSTER_PG_HOST"),
        port=int(_get("DAGSTER_PG_PORT", "5432")),
        user=_get("DAGSTER_PG_USER", "postgres"),
        db=_get("DAGSTER_PG_DB", "dagster"),
        password_set=is_set("DAGSTER_PG_PASSWORD"),
        url_scheme=url.split("://", 1)[0] if "://" in url else "",
    )
