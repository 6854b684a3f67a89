"""``model-foundry query``: ad-hoc SQL that waits its turn instead of failing on a lock."""

from __future__ import annotations

from pathlib import Path

import duckdb

from model_foundry.lib import storage


class QueryError(ValueError):
    """The SQL a person typed was refused by DuckDB; the message is DuckDB's own."""


def run_query(sql: str, db_path: str | Path, *, max_rows: int = 50) -> str:
    """Run ``sql`` read-only and return it rendered as a table.

    Writers hold the file for a batch at a time, so a query that finds it locked waits
    (jittered backoff) rather than showing the user DuckDB's lock error.
    """
    path = Path(db_path)
    if not path.exists():
        raise FileNotFoundError(
            f"no DuckDB file at {path}; run `make demo` or `make up` first, "
            "or point MODEL_FOUNDRY_DUCKDB at one"
        )
    with storage.connect(path, read_only=True) as con:
        try:
            relation = con.sql(sql)
            if relation is None:
                return "OK"
            frame = relation.limit(max_rows + 1).df()
        except duckdb.Error as exc:
            # A typo or a write on the read-only file is the person's to fix: DuckDB's
            # message (first line; the rest is a caret diagram) and nothing of ours.
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise QueryError(message) from None
    more = len(frame) > max_rows
    frame = frame.head(max_rows)
    text = frame.to_string(index=False, max_colwidth=60) if len(frame.columns) else "OK"
    if more:
        text += f"\n... (more than {max_rows} rows; use --max-rows or LIMIT)"
    else:
        text += f"\n({len(frame)} rows)"
    return text


__all__ = ["QueryError", "run_query"]
