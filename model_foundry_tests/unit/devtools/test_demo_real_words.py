"""What ``demo --real`` prints of the model's own words: a summary and a translation with the
gate their run stored, a verdict judged from the request it answered. A real DuckDB file."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry.devtools import demo
from model_foundry.lib.summaries.rows import write_summaries
from model_foundry.lib.summaries.translations import write_translations
from model_foundry.lib.tables.summaries import SummaryRow, TranslationRow


def test_the_real_words_show_each_answer_with_its_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "demo.duckdb"
    summary = SummaryRow(
        "s-1", "session-a", 2, "[]", None, None, "en", "The backup failed and was rerun.",
        "kindergarten", "m", 40, 9, 0.3, 30.0, "run", gate="cut_off",
    )  # fmt: skip
    assert write_summaries(db, [summary]) == 1
    translation = TranslationRow(
        "s-1", "session-a", "t-1", "English", "Japanese", summary.summary,
        "バックアップは失敗しました。", "translator", "m", 60, 12, 0.4, 30.0, "run",
    )  # fmt: skip
    assert write_translations(db, [translation]) == 1

    demo._real_words(db, {"held_back_by_gate": {"echo": 2, "cut_off": 1}, "agreement_rate": 0.5})

    shown = capsys.readouterr().out
    assert "a summary (kindergarten; gates: held back as cut_off):" in shown
    assert "a translation (translator; gates: kept):" in shown
    assert "a verdict: none was stored" in shown
    assert "the dataset export held back, by cause: echo: 2, cut_off: 1" in shown
    assert "judge agreement rate: 50%" in shown
