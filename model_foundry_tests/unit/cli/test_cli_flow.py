"""model-foundry flow SESSION --out FILE: a picture of any session, or one sentence why not."""

from pathlib import Path

import pytest
from PIL import Image

from model_foundry.cli import main
from model_foundry.devtools.sample_events import sample_events
from model_foundry_tests.unit.lib.flow.test_store import ingest, query


def test_flow_draws_a_session_as_svg_and_png(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(db_path))
    ingest(db_path, sample_events(1000, sessions=2, seed=1))
    session = query(db_path, "SELECT min(correlation_id) FROM flow_nodes")[0][0]
    assert main(["flow", session, "--out", str(tmp_path / "f.svg")]) == 0
    out = capsys.readouterr().out
    assert f"{session}: " in out and "parallel branches (uncoordinated" in out
    svg = (tmp_path / "f.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "slot: naughty" in svg
    assert main(["flow", session, "--out", str(tmp_path / "f.png"), "--max-nodes", "20"]) == 0
    with Image.open(tmp_path / "f.png") as image:
        assert image.format == "PNG"


def test_flow_says_in_one_sentence_what_is_wrong(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(db_path))
    assert main(["flow", "s", "--out", str(tmp_path / "f.svg")]) == 1
    assert "no DuckDB file at" in capsys.readouterr().err
    ingest(db_path, sample_events(10, sessions=1))
    assert main(["flow", "nope", "--out", str(tmp_path / "f.svg")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("model-foundry: session 'nope' has no lineage events in ")
    assert main(["flow", "nope", "--out", str(tmp_path / "f.gif")]) == 1
    assert ".svg or .png" in capsys.readouterr().err
    assert not (tmp_path / "f.svg").exists()
