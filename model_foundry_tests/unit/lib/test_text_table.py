"""Plain-text tables: columns fit their cells, figures are rounded for people."""

from __future__ import annotations

from model_foundry.lib.text_table import text_table


def test_columns_fit_and_figures_are_rounded() -> None:
    table = text_table(
        ("slot", "requests", "latency_s", "tok_s"),
        [("kindergarten", 1200, 0.02704693550003867, 1234.5678), ("naughty", 7, None, 3.0)],
        indent="  ",
    )
    assert table.splitlines() == [
        "  slot          requests  latency_s    tok_s",
        "  kindergarten     1,200      0.027  1,234.6",
        "  naughty              7          -      3.0",
    ]
