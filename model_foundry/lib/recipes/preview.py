"""A preview's rows as text: one block per row, a line per column (psql's expanded display),
since a recipe's rows are too wide for a terminal's table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_foundry.lib import storage

# A longer value is cut, with its length said: a preview is for reading, the view has all.
VALUE_WIDTH = 160


def _shown(value: Any) -> str:
    text = "NULL" if value is None else " ".join(str(value).split())
    if len(text) > VALUE_WIDTH:
        return f"{text[:VALUE_WIDTH]}… ({len(text)} characters)"
    return text


def preview_rows(db_path: Path, view: str, version: str, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` rows of ``version`` in the recipe's view (``view`` is the name the
    run made from the recipe's checked name)."""
    if not view.isidentifier():
        raise ValueError(f"{view!r} is not a plain identifier")
    with storage.connect(db_path, read_only=True) as con:
        cursor = con.execute(
            f"SELECT * EXCLUDE (version, row_id) FROM {view} WHERE version = ? "
            "ORDER BY row_index LIMIT ?",
            [version, limit],
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def expanded(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no rows)"
    width = max(len(k) for k in rows[0])
    blocks = []
    for row in rows:
        head = f"-[ row {row.get('row_index')} ]"
        lines = [head + "-" * max(0, width + 20 - len(head))]
        lines += [f"{k.ljust(width)} | {_shown(v)}" for k, v in row.items() if k != "row_index"]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


__all__ = ["expanded", "preview_rows"]
