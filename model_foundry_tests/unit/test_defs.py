"""The whole set of Dagster definitions, pinned down.

Everything a user sees by name (asset keys, their deps, groups, kinds, tags, partitions,
automation, checks, jobs and their ops, sensors, schedules, resource keys) is recorded in
``snapshots/defs.json``. A refactor that changes any of it fails here; a change made on
purpose regenerates the file with ``MODEL_FOUNDRY_UPDATE_SNAPSHOT=1 pytest -k test_defs``
and shows up in the diff.
"""

from __future__ import annotations

import json
import os
from typing import Any

import dagster as dg

from model_foundry_tests.tiers import TESTS_ROOT

SNAPSHOT = TESTS_ROOT / "snapshots" / "defs.json"


def _config_fields(assets_def: dg.AssetsDefinition) -> list[str]:
    """Run-config paths users type (``ops: {<op>: {config: {...}}}``), as field names."""
    field = assets_def.op.config_field
    if field is None:
        return []
    fields = getattr(field.config_type, "fields", None) or {}
    return sorted(fields)


def _assets(defs: dg.Definitions) -> dict[str, Any]:
    graph = defs.resolve_asset_graph()
    out: dict[str, Any] = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        partitions = node.partitions_def
        out[key.to_user_string()] = {
            "deps": sorted(k.to_user_string() for k in node.parent_keys),
            "group": node.group_name,
            "kinds": sorted(node.kinds),
            "tags": dict(sorted(node.tags.items())),
            "owners": list(node.owners),
            "partitions": (
                sorted(partitions.get_partition_keys()) if partitions is not None else None
            ),
            "automation": (
                node.automation_condition.get_label() or type(node.automation_condition).__name__
                if node.automation_condition is not None
                else None
            ),
            "checks": sorted(c.name for c in node.check_keys),
            "op": node.assets_def.node_def.name,
            "config": _config_fields(node.assets_def),
        }
    return out


def _jobs(defs: dg.Definitions) -> dict[str, Any]:
    repo = defs.get_repository_def()
    out: dict[str, Any] = {}
    for job in sorted(repo.get_all_jobs(), key=lambda j: j.name):
        if job.name.startswith("__ASSET_JOB"):
            continue
        out[job.name] = {
            "ops": sorted(node.name for node in job.graph.nodes),
            "tags": {k: v for k, v in sorted(job.tags.items())},
            "partitioned": job.partitions_def is not None,
        }
    return out


def _sensors(defs: dg.Definitions) -> dict[str, Any]:
    repo = defs.get_repository_def()
    out: dict[str, Any] = {}
    for sensor in sorted(repo.sensor_defs, key=lambda s: s.name):
        out[sensor.name] = {
            "type": sensor.sensor_type.value,
            "default_status": sensor.default_status.value,
            "minimum_interval_seconds": sensor.minimum_interval_seconds,
            "jobs": sorted(t.job_name for t in sensor.targets),
        }
    return out


def _schedules(defs: dg.Definitions) -> dict[str, Any]:
    repo = defs.get_repository_def()
    return {
        s.name: {
            "cron": s.cron_schedule,
            "job": s.job_name,
            "timezone": s.execution_timezone,
            "default_status": s.default_status.value,
        }
        for s in sorted(repo.schedule_defs, key=lambda s: s.name)
    }


def snapshot_of(defs: dg.Definitions) -> dict[str, Any]:
    return {
        "assets": _assets(defs),
        "jobs": _jobs(defs),
        "sensors": _sensors(defs),
        "schedules": _schedules(defs),
        "resources": sorted(defs.resources or {}),
    }


def test_definitions_match_the_snapshot() -> None:
    from model_foundry.definitions import defs

    current = snapshot_of(defs())
    text = json.dumps(current, indent=2, sort_keys=True) + "\n"
    if os.environ.get("MODEL_FOUNDRY_UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.write_text(text)
    recorded = json.loads(SNAPSHOT.read_text())
    assert current == recorded, (
        "Dagster definitions changed; if on purpose, regenerate with "
        "MODEL_FOUNDRY_UPDATE_SNAPSHOT=1 and name the difference in the commit"
    )


def test_every_job_resolves() -> None:
    from model_foundry.definitions import defs

    loaded = defs()
    for job in loaded.get_repository_def().get_all_jobs():
        assert job.execute_in_process is not None
        loaded.resolve_job_def(job.name)
