"""What an export says about itself: the warning when a small export leaves a split empty."""

from __future__ import annotations

from pathlib import Path

from model_foundry.lib.exports.card import ExportFigures
from model_foundry.lib.exports.published import ExportOutcome, empty_split_warning


def outcome(
    rows_by_split: dict[str, int], group: str = "session", groups: int = 3
) -> ExportOutcome:
    return ExportOutcome(Path("/x"), _figures(rows_by_split, groups), group)


def _figures(rows_by_split: dict[str, int], groups: int) -> ExportFigures:
    return ExportFigures(
        dataset="agents",
        version="v1",
        kind="records",
        rows_by_split=rows_by_split,
        records=sum(rows_by_split.values()),
        sessions=groups,
        models=[],
        slots=[],
        redactions_by_kind={},
        duplicates_removed=0,
        clusters=0,
        removed_by_filter={},
        split_joins=0,
        license="unknown",
        languages=[],
    )


def test_an_empty_test_split_is_said_in_a_sentence() -> None:
    assert empty_split_warning(outcome({"train": 12, "test": 0}), 0.1) == (
        "test split is empty: 12 records from 3 sessions are too few for test_share 0.1"
    )
    # A split with no record at all may be missing from the counts.
    assert empty_split_warning(outcome({"train": 1_200}, "prompt", 40), 0.05) == (
        "test split is empty: 1,200 records from 40 prompts are too few for test_share 0.05"
    )
    assert empty_split_warning(outcome({"train": 0, "test": 2}, groups=1), 0.5) == (
        "train split is empty: 2 records from 1 session are too few for test_share 0.5"
    )


def test_no_warning_when_both_splits_hold_records_or_nothing_was_exported() -> None:
    assert empty_split_warning(outcome({"train": 11, "test": 1}), 0.1) is None
    assert empty_split_warning(outcome({}), 0.1) is None
    assert empty_split_warning(outcome({"train": 0, "test": 0}), 0.1) is None
