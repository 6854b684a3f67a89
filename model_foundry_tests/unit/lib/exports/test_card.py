"""The card knows none of its callers: their parts are what they hand it."""

from __future__ import annotations

from model_foundry.lib.exports.card import CardSections, ExportFigures, card_text, held_back_line
from model_foundry.lib.exports.layouts import SAMPLES, SESSIONS


def _figures(**given: object) -> ExportFigures:
    base: dict[str, object] = dict(
        dataset="agents", version="v1", kind="samples", rows_by_split={"train": 2},
        records=3, sessions=2, models=[], slots=[], redactions_by_kind={},
        duplicates_removed=0, clusters=3, removed_by_filter={}, split_joins=0,
        license="unknown", languages=["en"],
    )  # fmt: skip
    return ExportFigures(**{**base, **given})  # type: ignore[arg-type]


def test_a_card_without_sections_says_nothing_of_a_callers_figures() -> None:
    figures = _figures(
        held_back_by_gate={"empty": 1},
        preference={"judge_models": ["j"]},
        recipe={"name": "r"},
    )
    card = card_text(SESSIONS, figures)
    assert "Agent session trajectories exported" in card and "Sessions: 2" in card
    assert "held back" not in card and "Preference" not in card and "recipe" not in card


def test_a_callers_lines_and_sections_go_where_they_belong_in_order() -> None:
    figures = _figures(held_back_by_gate={"empty": 1, "echo": 0})
    parts = CardSections(
        holds=[held_back_line, lambda f: "- One more line.\n"],
        sections=[lambda f: "\n## First\n", lambda f: "", lambda f: f"\n## {f.dataset}\n"],
    )
    card = card_text(SAMPLES, figures, parts)
    assert "Prompt fan-out samples exported" in card and "Prompts: 2" in card
    holds = card.index("## What it holds")
    gates = card.index("held back by the quality gates, per cause (also counted when a filter")
    files = card.index("## Files")
    assert holds < gates < card.index("- One more line.") < files
    assert "echo: 0, empty: 1." in card
    assert files < card.index("## First") < card.index("## agents") < card.index("## How it")


def test_no_gate_ran_no_line() -> None:
    assert held_back_line(_figures()) == ""
