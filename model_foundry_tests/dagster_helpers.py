"""A temporary Dagster instance for tests that need run records but not captured logs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg

# Dagster's default captures each step's stdout and stderr through `tail` processes and a
# watcher, which is most of a small materialization's cost. The tests that search those logs
# (test_security.py) open Dagster's own default instead.
NO_COMPUTE_LOGS = {
    "compute_logs": {
        "module": "dagster._core.storage.noop_compute_log_manager",
        "class": "NoOpComputeLogManager",
    }
}


@contextmanager
def quiet_instance(**kwargs: Any) -> Iterator[dg.DagsterInstance]:
    """``dg.instance_for_test`` without captured compute logs."""
    overrides = {**NO_COMPUTE_LOGS, **kwargs.pop("overrides", {})}
    with dg.instance_for_test(overrides=overrides, **kwargs) as instance:
        yield instance
