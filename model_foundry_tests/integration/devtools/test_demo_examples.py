"""What ``make demo`` runs after the pipeline's own steps: the shipped example recipes on the
demo's data, a few rows each and a line each, on the slot simulator with a real DuckDB file.
(The demo itself is a system test; this is the function it calls.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from model_foundry.devtools.demo import run_example_recipes
from model_foundry_tests.pipeline_helpers import count
from model_foundry_tests.recipe_helpers import (
    QUESTIONS,
    insert_searches,
    insert_summaries,
    summary,
)

pytestmark = pytest.mark.timeout(300)


def test_the_demo_runs_each_shipped_example_on_its_data_and_says_what_was_held_back(
    tmp_path: Path, fast_slots: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    db = tmp_path / "demo" / "model_foundry.duckdb"
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(db))
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "demo"))
    monkeypatch.setenv("MODEL_FOUNDRY_SLOTS", str(fast_slots))
    monkeypatch.setenv("MODEL_FOUNDRY_SLOT_LIMITER", "flock")
    monkeypatch.delenv("NATS_URL", raising=False)
    monkeypatch.delenv("MODEL_FOUNDRY_RECIPE_EXAMPLES", raising=False)
    insert_searches(db, QUESTIONS)
    insert_summaries(db, [summary("s1", "The user asked how to rotate the lab's logs."),
                          summary("s2", "The user asked why a slot was slow.")])  # fmt: skip

    outcomes = run_example_recipes(db, rows=2)

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "example recipes (examples/recipes/, in Dagster only with "
        "MODEL_FOUNDRY_RECIPE_EXAMPLES=true), 2 rows each:"
    )
    assert lines[1:] == [
        "  recipe coding_tasks: 2 rows, 0 complete; held back by cause: solution_parses 2 "
        "(Python that does not parse)",
        "  recipe search_questions: 2 rows, 2 complete; held back by cause: none",
        "  recipe summary_round_trip: 2 rows, 2 complete; held back by cause: none",
    ]
    assert [o["recipe"] for o in outcomes] == ["coding_tasks", "search_questions",
                                               "summary_round_trip"]  # fmt: skip
    assert count(db, "SELECT count(*) FROM recipe_coding_tasks") == 2
    assert count(db, "SELECT count(*) FROM recipe_search_questions") == 2
    assert count(db, "SELECT count(*) FROM recipe_summary_round_trip") == 2
    # Figures for people, as the rest of the demo prints them.
    assert not re.search(r"\{'|\d\.\d{6,}", "\n".join(lines))
