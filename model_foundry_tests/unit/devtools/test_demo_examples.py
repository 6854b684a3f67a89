"""The demo's line for an example recipe: rows, and what was held back by cause."""

from __future__ import annotations

from model_foundry.devtools.demo import example_line


def test_an_example_line_names_each_cause_with_its_count_and_any_unanswered_cells() -> None:
    meta = {
        "recipe": "r", "rows": 1200, "rows_complete": 3, "llm_cells_unanswered": 2,
        "rejected_by_cause": {"check: shorter than 5 characters": 1100, "answer: echo": 4},
    }  # fmt: skip
    assert example_line(meta) == (
        "  recipe r: 1,200 rows, 3 complete; held back by cause: check 1,100 (shorter than 5 "
        "characters), answer 4 (echo); 2 cells unanswered"
    )
    none = {"recipe": "r", "rows": 0, "rows_complete": 0, "rejected_by_cause": {}}
    assert example_line(none) == "  recipe r: 0 rows, 0 complete; held back by cause: none"
