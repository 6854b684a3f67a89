"""A bad slot file is refused by every verb that reads it: one sentence naming file and field
on stderr, exit 1, before anything starts (the unit tier makes any subprocess, socket or
sleep fail, so a verb that started something first fails here)."""

from pathlib import Path

import pytest

from model_foundry.cli import main
from model_foundry_tests.slot_fixtures import bad_slot_file


@pytest.mark.parametrize(
    "argv",
    [
        ["up"],
        ["demo"],
        ["dataset", "collect", "--name", "refused"],
        ["dataset", "collect", "--name", "refused", "--judge"],
        ["simulate-slots", "--all"],
        ["bench", "slots", "--prompts", "2"],
        ["metrics", "--no-nats"],
    ],
    ids=" ".join,
)
def test_a_bad_slot_file_is_one_sentence_and_exit_1(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, sentence = bad_slot_file(tmp_path / "slots.yaml")
    monkeypatch.setenv("MODEL_FOUNDRY_SLOTS", str(path))
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(tmp_path / "mf.duckdb"))
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].endswith(f": {sentence}"), err
    # Nothing ran: the demo's data folder and the DuckDB file are untouched.
    assert not (tmp_path / "mf.duckdb").exists()
    assert not (tmp_path / "data" / "demo").exists()
