"""Plain metadata from ``lib`` as Dagster metadata values, wrapped in this one place."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg


def dagster_metadata(plain: Mapping[str, Any]) -> dict[str, Any]:
    """Dicts and lists as JSON, paths as paths; numbers and strings as they are."""
    out: dict[str, Any] = {}
    for key, value in plain.items():
        if isinstance(value, Mapping | list | tuple):
            out[key] = dg.MetadataValue.json(value if isinstance(value, Mapping) else list(value))
        elif isinstance(value, Path):
            out[key] = dg.MetadataValue.path(str(value))
        else:
            out[key] = value
    return out


__all__ = ["dagster_metadata"]
