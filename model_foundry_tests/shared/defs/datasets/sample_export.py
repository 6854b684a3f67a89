"""The fan-out collection's export loads with datasets 3.6 and 5.x as its card says, each
record as samples.parquet holds it, and near-duplicate prompts are asked once.

What the unit, integration and system tests of ``defs/datasets/test_sample_export.py`` share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from model_foundry.defs.datasets.assets import dataset_samples, dataset_samples_checks
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry_tests.dagster_helpers import quiet_instance


@pytest.fixture(name="exported", scope="module")
def exported_fixture(tmp_path_factory: pytest.TempPathFactory, fast_slots: Path) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("samples")
    prompts = tmp / "prompts" / "p.jsonl"
    prompts.parent.mkdir()
    topics = ["zone maps", "row groups", "the WAL", "checkpoints", "ART indexes", "vacuum",
              "compression", "MVCC"]  # fmt: skip
    rows = [
        {"id": f"p{i}", "prompt": f"Explain {t} in DuckDB: how they are built, when they are "
         f"read, what they cost in memory and on disk, and how a query planner uses {t} to "
         "skip work, with one short example in SQL."}
        for i, t in enumerate(topics)
    ]  # fmt: skip
    # A near duplicate of p0 (its last word changed): asked once, with p0.
    rows.append({**rows[0], "id": "near", "prompt": rows[0]["prompt"].replace("SQL.", "Python.")})
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = {
        "name": "fan", "version": "v1", "prompt_dir": str(prompts.parent),
        "include_chat_sessions": False, "output_dir": str(tmp / "datasets"),
        "license": "cc-by-4.0", "test_share": 0.4,
    }  # fmt: skip
    # The asset with its blocking export checks, as the collection job runs them.
    defs = dg.Definitions(
        assets=[dataset_samples],
        asset_checks=dataset_samples_checks,
        jobs=[dg.define_asset_job("collect", selection=[dataset_samples])],
        resources={
            "duckdb": FoundryDuckDB(database=str(tmp / "f.duckdb")),
            "slots": SlotsResource(slot_file=str(fast_slots)),
        },
    )
    with quiet_instance() as instance:
        result = defs.resolve_job_def("collect").execute_in_process(
            instance=instance, run_config={"ops": {"dataset_samples": {"config": config}}}
        )
    meta = result.asset_materializations_for_node("dataset_samples")[0].metadata
    return {
        "folder": tmp / "datasets" / "fan" / "v1",
        "meta": {k: v.value for k, v in meta.items()},
        "checks": {e.check_name: e for e in result.get_asset_check_evaluations()},
    }
