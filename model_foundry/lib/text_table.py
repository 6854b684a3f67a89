"""Plain-text tables for the CLI and the demo: each column as wide as its widest cell."""

from __future__ import annotations

from collections.abc import Sequence


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1 else f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None else str(value)


def text_table(header: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "") -> str:
    """``rows`` under ``header``, two spaces between columns; a column of numbers (ints with
    thousands separators, floats to three significant digits below 1 and one decimal above)
    is right-aligned, any other left-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(header)]
    # Missing values (None, shown as "-") leave a column of numbers right-aligned.
    right = [
        any(_is_number(row[i]) for row in rows)
        and all(_is_number(row[i]) or row[i] is None for row in rows)
        for i in range(len(header))
    ]

    def line(values: Sequence[str]) -> str:
        padded = (
            v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True)
        )
        return (indent + "  ".join(padded)).rstrip()

    return "\n".join([line(list(header)), *(line(row) for row in cells)])


__all__ = ["text_table"]
