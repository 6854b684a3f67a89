"""``model-foundry dataset collect --judge`` as a user runs it, on the slot simulator: the
integration tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry_tests.integration.cli.test_cli import cli
from model_foundry_tests.slot_fixtures import shipped_data, write_yaml

pytestmark = pytest.mark.timeout(300)


def test_judge_without_a_judge_slot_is_refused_in_one_sentence(tmp_path: Path) -> None:
    data = shipped_data()
    del data["slots"]["grandpa"], data["roles"]["grandpa"], data["roles"]["reasoning"]
    data["profiles"] = {"standard": ["naughty", "kindergarten", "translator"]}
    slots = write_yaml(tmp_path / "no-judge.yaml", data)
    env = {"MODEL_FOUNDRY_SLOTS": str(slots), "MODEL_FOUNDRY_DATA_DIR": str(tmp_path / "data")}
    result = cli("dataset", "collect", "--judge", "--no-chat-sessions", env=env)
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"model-foundry: --judge refused: profile 'standard' of {slots} has no judge slot: "
        "name one with profiles.standard.judge, or define a 'grandpa' slot"
    ]
    assert not (tmp_path / "data" / "datasets").exists()
