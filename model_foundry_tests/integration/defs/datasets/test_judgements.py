"""dataset_judgements on the slot simulator: grandpa judges the standard profile's answers in:
the integration tests."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import yaml

from model_foundry_tests.shared.defs.datasets.judgements import (  # noqa: F401 - fixtures are found by name
    TOKEN,
    TOPICS,
    _collect,
    _meta,
    judged_fixture,
)

pytestmark = pytest.mark.timeout(300)


def test_a_rerun_sends_no_judge_request(judged, fast_slots) -> None:
    config = {**judged["config"], "version": "v2"}
    # v2 asks the same prompts: every sample and every verdict is a cell the judge recipe
    # holds, so nothing is asked, not even of the completions store.
    result = _collect(judged["tmp"], fast_slots, config, judged["db"])
    assert result.success
    meta = _meta(result, "dataset_judgements")
    assert meta["judgements_written"] == 2 * len(TOPICS)
    assert meta["cells_reused"] == len(TOPICS) and meta["cells_asked"] == 0
    assert meta["sent"] == 0 and meta["requests"] == 0
    # The same verdicts: v2's pairs are v1's.
    assert meta["preference_pairs"] == judged["judgements"]["preference_pairs"]


# A planted token (random-looking, the shape of a GitHub classic token): the simulator's
# answers echo the prompt's words, so it reaches the answers and the pairs too.


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
