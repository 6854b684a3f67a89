"""``model-foundry dataset collect --judge`` as a user runs it, on the slot simulator."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from model_foundry_tests.integration.cli.test_cli import cli
from model_foundry_tests.pipeline_helpers import slot_simulator_process

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def sim_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with slot_simulator_process(tmp_path_factory.mktemp("judge-sim"), speed=50) as path:
        yield path


def test_collect_judge_prints_the_pairs_and_writes_a_preference_config(
    tmp_path: Path, sim_slots: Path
) -> None:
    prompts = tmp_path / "data" / "prompts" / "p.jsonl"
    prompts.parent.mkdir(parents=True)
    rows = [{"id": f"p{i}", "prompt": f"Why does DuckDB keep {t}?"} for i, t in
            enumerate(["zone maps", "row groups", "a WAL", "checkpoints", "ART indexes",
                       "statistics"])]  # fmt: skip
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    env = {"MODEL_FOUNDRY_SLOTS": str(sim_slots), "MODEL_FOUNDRY_DATA_DIR": str(tmp_path / "data")}
    result = cli(
        "dataset", "collect", "--name", "judged", "--version", "v1", "--judge",
        "--no-chat-sessions", env=env, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout.splitlines()
    meta = json.loads(out[-1])["judgements"]
    judge_line = next(line for line in out if line.startswith("judge glm-5.1: "))
    assert f"{meta['preference_pairs']} preference pairs" in judge_line
    assert "| language | model | opponent |" in result.stdout
    assert meta["judgements_written"] == 2 * len(rows) and meta["judgements_unparsed"] == 0
    folder = tmp_path / "data" / "datasets" / "judged" / "v1"
    header = yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---")[1])
    configs = {c["config_name"]: c for c in header["configs"]}
    assert set(configs) == {"samples", "preference"}
    for entry in configs["preference"]["data_files"]:
        assert (folder / entry["path"]).is_file()
