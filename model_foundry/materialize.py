"""Materialize assets in this process, outside the daemon, with the code location's resources.

``model-foundry dataset collect`` and the demo run assets this way: the same definitions and
the same resource wiring (``defs/resources.py``) as the daemon's runs, on an ephemeral
instance, with Dagster's per-step DEBUG events kept out of the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from model_foundry.defs.resources import resources_from_env


# Progress lines (INFO) stay by default; Dagster's per-step DEBUG events would drown them.
def materialize(
    assets: list[Any],
    *,
    ops: dict[str, Any] | None = None,
    partition_key: str | None = None,
    instance: dg.DagsterInstance | None = None,
    log_level: str = "INFO",
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        resources=resources_from_env(),
        run_config={
            "loggers": {"console": {"config": {"log_level": log_level}}},
            "ops": ops or {},
        },
        partition_key=partition_key,
        instance=instance,
        raise_on_error=False,
    )


def collect_dataset(config: dict[str, Any]) -> dg.ExecuteInProcessResult:
    """Materialize ``dataset_samples`` with ``config`` (the collection's run config), and
    with ``judge`` set, ``dataset_judgements`` after it with the same config."""
    from model_foundry.defs.datasets.assets import dataset_samples

    if not config.get("judge"):
        return materialize([dataset_samples], ops={"dataset_samples": {"config": config}})
    from model_foundry.defs.datasets.judgements import dataset_judgements

    ops = {"dataset_samples": {"config": config}, "dataset_judgements": {"config": config}}
    return materialize([dataset_samples, dataset_judgements], ops=ops)


def judge_collected(config: dict[str, Any], collected: dict[str, Any]) -> dg.ExecuteInProcessResult:
    """Materialize ``dataset_judgements`` for a collection ``dataset collect`` ran without
    Dagster: ``collected`` (its figures) is recorded first as ``dataset_samples``'
    materialization, which is where the judging step reads the version and its failures."""
    from model_foundry.defs import keys
    from model_foundry.defs.datasets.judgements import dataset_judgements
    from model_foundry.defs.metadata import dagster_metadata

    instance = dg.DagsterInstance.ephemeral()
    instance.report_runless_asset_event(
        dg.AssetMaterialization(keys.DATASET_SAMPLES, metadata=dagster_metadata(collected))
    )
    ops = {"dataset_judgements": {"config": config}}
    return materialize([dataset_judgements], ops=ops, instance=instance)


def materialize_recipe(path: Path, name: str) -> dg.ExecuteInProcessResult:
    """Materialize the dataset recipe ``name`` declared in the defs.yaml at ``path``."""
    from model_foundry.defs.recipes.component import recipe_file_definitions, recipe_key

    key = recipe_key(name)
    assets = [a for a in recipe_file_definitions(path).assets or () if key in a.keys]  # type: ignore[union-attr]
    return materialize(assets)


__all__ = ["collect_dataset", "judge_collected", "materialize", "materialize_recipe"]
