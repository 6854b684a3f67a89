"""The suite's three tiers, by what a test starts; the folder a test lives in is its tier.

- ``unit/``: no subprocess, no network, no sleep. Files in a temporary folder (a DuckDB file,
  an export) are allowed. The guard below makes a unit test that reaches for any of the three
  fail, naming what it did, so the tier cannot drift.
- ``integration/``: real files and at most one kind of server or process (a nats-server, the
  slot simulator, a llama-server, a child process of the project's own).
- ``system/``: Dagster daemon or webserver stacks, the demo, several processes at once (kill
  and worker tests), Prometheus, PostgreSQL.

``make check`` runs the first two in parallel after each change; ``make test`` runs all three.
"""

from __future__ import annotations

import asyncio
import multiprocessing.util
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

TESTS_ROOT = Path(__file__).resolve().parent
REPO_ROOT = TESTS_ROOT.parent
TIERS = ("unit", "integration", "system")


# The tests run one after another on one pytest-xdist worker, by node id: one unit of work.
# The Dagster daemon stacks: a daemon launches a process per run, and the freshness test
# measures how fast runs follow each other; beside a second stack on 2 cores it measured the
# other stack's launches, not the pipeline's. And `bench prefill`, which serves the real
# weights on three llama-servers at once: beside it the freshness test's inbox cycle doubled
# and the daemon-restart test's publisher failed. (A unit test checks that each entry still
# names a test.)
SERIAL_STACKS = (
    "model_foundry_tests/system/test_daemon_freshness.py::",
    "model_foundry_tests/system/test_pipeline_daemon.py::",
    "model_foundry_tests/system/test_faults_pipeline.py::"
    "test_daemon_killed_with_runs_in_flight_and_restarted_loses_nothing",
    "model_foundry_tests/system/cli/test_cli.py::test_bench_e2e_runs_the_daemon_and_loses_nothing",
    "model_foundry_tests/system/devtools/test_bench_prefill.py::",
)


def work_unit(nodeid: str) -> str:
    """What pytest-xdist hands a worker at once (``scheduling.py``): the serial stacks; an
    integration or system module, whose module fixtures (servers, stacks) then start once; or
    a single unit test."""
    if nodeid.startswith(SERIAL_STACKS):
        return "serial-stacks"
    path = nodeid.split("::", 1)[0]
    parts = Path(path).parts
    if len(parts) > 1 and parts[1] in ("integration", "system"):
        return path
    return nodeid


def tier_of(path: Path) -> str | None:
    try:
        top = path.resolve().relative_to(TESTS_ROOT).parts[0]
    except (ValueError, IndexError):
        return None
    return top if top in TIERS else None


class TierViolation(BaseException):
    """Raised when a unit test reaches past its tier.

    A BaseException, like KeyboardInterrupt, so that no ``except Exception`` in the code under
    test (a connect retry loop, say) can swallow it and turn it into a slow, passing test.
    """


def _refuse(what: str) -> Callable[..., Any]:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise TierViolation(f"a unit test may not {what}; move the test to integration/ or system/")

    return refused


def guard_unit_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make subprocesses, network sockets and sleeps fail inside a unit test."""
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("start a subprocess"))
    # multiprocessing starts its children without Popen: through a fork, or fork_exec.
    monkeypatch.setattr(os, "fork", _refuse("fork a process"))
    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds", _refuse("spawn a process"))
    inet = (socket.AF_INET, socket.AF_INET6)

    def guarded(original: Callable[..., Any], verb: str) -> Callable[..., Any]:
        def call(sock: socket.socket, *args: Any) -> Any:
            if sock.family in inet:
                _refuse(f"{verb} a network socket")()
            return original(sock, *args)

        return call

    for name in ("connect", "connect_ex", "bind"):
        monkeypatch.setattr(socket.socket, name, guarded(getattr(socket.socket, name), name))

    real_sleep = time.sleep
    real_async_sleep = asyncio.sleep

    def sleep(seconds: float) -> None:
        if seconds > 0:
            _refuse(f"sleep ({seconds} s)")()
        real_sleep(seconds)

    async def async_sleep(seconds: float, *args: Any, **kwargs: Any) -> Any:
        # asyncio.sleep(0) only yields to the loop; any longer is a wait.
        if seconds > 0:
            _refuse(f"sleep ({seconds} s)")()
        return await real_async_sleep(seconds, *args, **kwargs)

    monkeypatch.setattr(time, "sleep", sleep)
    monkeypatch.setattr(asyncio, "sleep", async_sleep)
