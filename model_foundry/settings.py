"""Non-secret settings read from the environment, with the defaults a fresh checkout uses.

Secrets (NATS credentials, slot API keys) are not read here: resources take them through
``dg.EnvVar`` so they never land in run config, logs or metadata.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = PROJECT_ROOT / "data"


def data_dir() -> Path:
    """Home of the DuckDB file, the local NATS store, prompt sources and exported datasets."""
    return Path(os.environ.get("MODEL_FOUNDRY_DATA_DIR", str(DEFAULT_DATA_DIR)))


def duckdb_path() -> Path:
    return Path(os.environ.get("MODEL_FOUNDRY_DUCKDB", str(data_dir() / "model_foundry.duckdb")))


def nats_urls() -> list[str]:
    """Servers from ``NATS_URL`` (comma-separated); the local server ``make up`` starts if unset."""
    raw = os.environ.get("NATS_URL", "").strip()
    if not raw:
        return ["nats://127.0.0.1:4222"]
    return [u.strip() for u in raw.split(",") if u.strip()]


def slot_file_path() -> Path:
    """The slot file: ``MODEL_FOUNDRY_SLOTS`` or the shipped example beside this module."""
    raw = os.environ.get("MODEL_FOUNDRY_SLOTS", "").strip()
    return Path(raw) if raw else Path(__file__).resolve().parent / "slots.yaml"


def profile() -> str:
    return os.environ.get("MODEL_FOUNDRY_PROFILE", "standard").strip() or "standard"
