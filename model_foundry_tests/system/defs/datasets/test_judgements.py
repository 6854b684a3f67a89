"""dataset_judgements on the slot simulator: grandpa judges the standard profile's answers in:
the system tests."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from model_foundry.devtools import hf_datasets
from model_foundry.lib.exports.layouts import PREFERENCE
from model_foundry_tests.hf_loading import load_offline
from model_foundry_tests.shared.defs.datasets.judgements import (  # noqa: F401 - fixtures are found by name
    judged_fixture,
)

pytestmark = pytest.mark.timeout(300)


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
