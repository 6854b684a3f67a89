"""dataset_judgements on the slot simulator: grandpa judges the standard profile's answers in
both orders through its JSON schema, the export gains a ``preference`` config that loads
with datasets 3.6 and 5.x, pairs keep their prompt's split, and a rerun asks nothing.

What the unit, integration and system tests of ``defs/datasets/test_judgements.py`` share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from model_foundry.defs.datasets.assets import dataset_samples
from model_foundry.defs.datasets.judgements import dataset_judgements
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry_tests.dagster_helpers import quiet_instance

TOPICS = ["zone maps", "row groups", "the WAL", "checkpoints", "ART indexes", "vacuum",
          "compression", "MVCC", "ゾーンマップ", "行グループ"]  # fmt: skip


def _collect(tmp: Path, slots: Path, config: dict[str, Any], db: Path) -> dg.ExecuteInProcessResult:
    with quiet_instance() as instance:
        return dg.materialize(
            [dataset_samples, dataset_judgements],
            instance=instance,
            resources={
                "duckdb": FoundryDuckDB(database=str(db)),
                "slots": SlotsResource(slot_file=str(slots)),
            },
            run_config={
                "ops": {
                    "dataset_samples": {"config": config},
                    "dataset_judgements": {"config": config},
                }
            },
            raise_on_error=False,
        )


def _meta(result: dg.ExecuteInProcessResult, node: str) -> dict[str, Any]:
    found = result.asset_materializations_for_node(node)[0].metadata
    return {k: v.value for k, v in found.items()}


@pytest.fixture(name="judged", scope="module")
def judged_fixture(tmp_path_factory: pytest.TempPathFactory, fast_slots: Path) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("judged")
    prompts = tmp / "prompts" / "p.jsonl"
    prompts.parent.mkdir()
    rows = [
        {"id": f"p{i}", "prompt": f"Explain {t} in DuckDB, with one short example in SQL and "
         f"the memory it costs. Topic number {i}."}
        for i, t in enumerate(TOPICS)
    ]  # fmt: skip
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = {
        "name": "judged", "version": "v1", "prompt_dir": str(prompts.parent),
        "include_chat_sessions": False, "output_dir": str(tmp / "datasets"),
        "test_share": 0.4, "judge": True,
    }  # fmt: skip
    db = tmp / "j.duckdb"
    result = _collect(tmp, fast_slots, config, db)
    assert result.success
    return {
        "tmp": tmp,
        "db": db,
        "config": config,
        "folder": tmp / "datasets" / "judged" / "v1",
        "samples": _meta(result, "dataset_samples"),
        "judgements": _meta(result, "dataset_judgements"),
    }


TOKEN = "ghp_" + "Zq8rT2mWx4LkP9vB7nC3dF6hJ1sA5eGyUoIi"
