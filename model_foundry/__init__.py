"""model-foundry: NATS JetStream events into DuckDB, prompts to GPU model slots, datasets out.

``model_foundry.DatasetRecipe`` is the dataset recipe component (``dg scaffold defs
model_foundry.DatasetRecipe recipes/<name>``); it is imported on first use, so the plain code
under ``lib`` and the CLI load without Dagster.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_COMPONENTS = ("DatasetRecipe",)


def __getattr__(name: str) -> Any:
    if name in _COMPONENTS:
        from model_foundry.defs.recipes.component import DatasetRecipe

        return DatasetRecipe
    raise AttributeError(f"module 'model_foundry' has no attribute {name!r}")


def __dir__() -> list[str]:
    # Dagster's registry lists a registry module's members with dir().
    return sorted([*globals(), *_COMPONENTS])
