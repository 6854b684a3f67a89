"""The command line as a user runs it: a real process, a real nats-server, a real DuckDB file.

What the unit, integration and system tests of ``cli/test_cli.py`` share."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from model_foundry.devtools.devstack import stop_process_group


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``model-foundry ARGS`` in a process group of its own.

    A verb that starts servers (``bench``, ``up``) and outlives ``timeout`` (or the test's
    own) is stopped with everything it started, not just its own process: otherwise its
    daemon, nats-server and simulator would outlive the test.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "model_foundry.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **(env or {})),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:  # its own timeout, or pytest-timeout's stopping the test
        stop_process_group(proc)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


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
