"""The command line as a user runs it: a real process, a real nats-server, a real DuckDB file.

What the unit, integration and system tests of ``cli/test_cli.py`` share."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, **(env or {})),
    )


HOLD_WRITE_LOCK = textwrap.dedent(
    """
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("CREATE TABLE IF NOT EXISTS t AS SELECT 42 AS answer")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    con.close()
    """
)


def _cells(box: str) -> list[list[str]]:
    """The header, type and value rows of DuckDB's drawn table, cell by cell."""
    return [
        [cell.strip() for cell in line.strip().strip("│").split("│")]
        for line in box.splitlines()
        if line.startswith("│")
    ]
