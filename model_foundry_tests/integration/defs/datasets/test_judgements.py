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
import yaml

from model_foundry.defs.datasets.assets import dataset_samples
from model_foundry.defs.datasets.judgements import dataset_judgements
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry_tests.dagster_helpers import quiet_instance

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


def test_a_rerun_sends_no_judge_request(judged, fast_slots) -> None:
    config = {**judged["config"], "version": "v2"}
    # v2 asks the same prompts: every sample and every judgement comes from the store.
    result = _collect(judged["tmp"], fast_slots, config, judged["db"])
    assert result.success
    meta = _meta(result, "dataset_judgements")
    assert meta["judgements_written"] == 2 * len(TOPICS)
    assert meta["sent"] == 0 and meta["reused_from_store"] == 2 * len(TOPICS)


# A planted token (random-looking, the shape of a GitHub classic token): the simulator's
# answers echo the prompt's words, so it reaches the answers and the pairs too.
TOKEN = "ghp_" + "Zq8rT2mWx4LkP9vB7nC3dF6hJ1sA5eGyUoIi"


def test_a_vllm_judge_is_constrained_and_pairs_are_scrubbed(tmp_path, fast_slots) -> None:
    # naughty (vLLM) judges the other two chat slots: its schema goes in structured_outputs.
    data = yaml.safe_load(fast_slots.read_text(encoding="utf-8"))
    data["profiles"]["standard"] = {
        "slots": ["kindergarten", "grandpa", "translator"],
        "judge": "naughty",
    }
    slots = tmp_path / "vllm-judge.yaml"
    slots.write_text(yaml.safe_dump(data), encoding="utf-8")
    prompts = tmp_path / "prompts" / "p.jsonl"
    prompts.parent.mkdir()
    rows = [
        {"id": f"p{i}", "prompt": f"My push with {TOKEN} failed on topic {i}: why?"}
        for i in range(6)
    ]
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = {
        "name": "vj", "version": "v1", "prompt_dir": str(prompts.parent),
        "include_chat_sessions": False, "output_dir": str(tmp_path / "datasets"),
        "judge": True,
    }  # fmt: skip
    result = _collect(tmp_path, slots, config, tmp_path / "v.duckdb")
    assert result.success
    meta = _meta(result, "dataset_judgements")
    assert meta["judgements_written"] == 2 * len(rows) and meta["judgements_unparsed"] == 0
    assert meta["judge_models"] == ["gemma-4-31b-it-nvfp4"]
    folder = tmp_path / "datasets" / "vj" / "v1"
    pairs = [
        r for path in sorted((folder / "hf" / "preference").glob("*.parquet"))
        for r in pq.read_table(path).to_pylist()
    ]  # fmt: skip
    assert len(pairs) == meta["preference_pairs"] > 0
    text = json.dumps(pairs) + "".join(
        p.read_text(encoding="utf-8") for p in (folder / "openai" / "preference").glob("*")
    )
    assert TOKEN not in text and "[REDACTED:github_token]" in text
    card = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert card["preference"]["redactions_by_kind"]["github_token"] >= 3 * len(pairs)
