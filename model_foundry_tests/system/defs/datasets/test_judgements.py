"""dataset_judgements on the slot simulator: grandpa judges the standard profile's answers in
both orders through its JSON schema, the export gains a ``preference`` config that loads
with datasets 3.6 and 5.x, pairs keep their prompt's split, and a rerun asks nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
import pytest

from model_foundry.defs.datasets.assets import dataset_samples
from model_foundry.defs.datasets.judgements import dataset_judgements
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.devtools import hf_datasets
from model_foundry.lib.datasets.layouts import PREFERENCE
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.hf_loading import load_offline

pytestmark = pytest.mark.timeout(300)

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


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, fast_slots: Path) -> dict[str, Any]:
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


def test_the_preference_config_loads_and_keeps_prompt_splits(judged, tmp_path) -> None:
    folder = judged["folder"]
    pairs = [
        r for split in ("train", "test")
        if (folder / "hf" / "preference" / f"{split}.parquet").exists()
        for r in pq.read_table(folder / "hf" / "preference" / f"{split}.parquet").to_pylist()
    ]  # fmt: skip
    assert len(pairs) == judged["judgements"]["preference_pairs"]
    samples = pq.read_table(folder / "samples.parquet").to_pylist()
    split_of = {r["prompt_id"]: r["split"] for r in samples}
    assert {r["prompt_id"] for r in samples if r["split"] == "test"}, "no test prompts"
    for pair in pairs:
        assert pair["split"] == split_of[pair["prompt_id"]]
        assert pair["model_chosen"] != pair["model_rejected"]
        assert pair["score_chosen"] > pair["score_rejected"]
        assert pair["judge_model"] == "glm-5.1"
        answers = {r["response"] for r in samples if r["prompt_id"] == pair["prompt_id"]}
        assert {pair["chosen"][0]["content"], pair["rejected"][0]["content"]} == answers
    for environment in hf_datasets.ENVIRONMENTS:
        result = load_offline(environment, folder, tmp_path / environment)
        loaded = result["loaded"]["preference"]
        columns = [f.name for f in PREFERENCE.schema]
        assert sorted(
            (r for rows in loaded.values() for r in rows), key=lambda r: r["id"]
        ) == sorted(({c: p[c] for c in columns} for p in pairs), key=lambda r: r["id"])


# A planted token (random-looking, the shape of a GitHub classic token): the simulator's
# answers echo the prompt's words, so it reaches the answers and the pairs too.
TOKEN = "ghp_" + "Zq8rT2mWx4LkP9vB7nC3dF6hJ1sA5eGyUoIi"
