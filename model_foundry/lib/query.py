"""``model-foundry query``: ad-hoc SQL that waits its turn instead of failing on a lock."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import duckdb

from model_foundry.lib import storage

# A value longer than this is wrapped by DuckDB's renderer; a JSON payload stays readable.
MAX_COLUMN_WIDTH = 60


class QueryError(ValueError):
    """The SQL a person typed was refused by DuckDB; the message is DuckDB's own."""


def run_query(sql: str, db_path: str | Path, *, max_rows: int = 50) -> str:
    """Run ``sql`` read-only and return it as DuckDB itself draws a result.

    DuckDB's own rendering, as its shell shows it: column types under the names, ``NULL``
    for missing values, and past ``max_rows`` the first and last rows with a count of all.
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
            return _rendered(relation, max_rows=max_rows)
        except duckdb.Error as exc:
            # A typo or a write on the read-only file is the person's to fix: DuckDB's
            # message (first line; the rest is a caret diagram) and nothing of ours.
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise QueryError(message) from None


def _rendered(relation: duckdb.DuckDBPyRelation, *, max_rows: int) -> str:
    # show() is the public way to pass the renderer its limits; it prints, so the text is
    # caught here and the caller decides where it goes.
    width = shutil.get_terminal_size(fallback=(120, 24)).columns
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        relation.show(max_rows=max(max_rows, 1), max_width=width, max_col_width=MAX_COLUMN_WIDTH)
    return out.getvalue().rstrip("\n")


__all__ = ["QueryError", "run_query"]
