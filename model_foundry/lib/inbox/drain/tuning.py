"""Interpreter settings a drain runs under, each set only while a drain runs and restored
after it."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import AsyncIterator

# The commit runs in a thread while the event loop fetches and validates the next batch.
# DuckDB releases the GIL while it works, but with CPython's default 5 ms switch interval the
# committing thread then waits for the GIL behind the busy event loop, and each DuckDB call
# hands the GIL back and forth. A much shorter interval lets the writer's thread run its
# queue of commits on its own (`bench ingest` shows the difference).
DRAIN_SWITCH_INTERVAL_S = 0.0001


@contextlib.asynccontextmanager
async def short_gil_switch_interval() -> AsyncIterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(previous, DRAIN_SWITCH_INTERVAL_S))
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


# Python's full (oldest-generation) garbage collection walks every tracked object: in a
# process that has imported Dagster that is a large heap before a single event, and a long
# drain allocates enough to trigger several. Freezing the heap as it is when the drain starts
# leaves those objects out of every collection (the drain's own garbage is still collected);
# unfreezing at the end hands them back to the oldest generation. A process that froze its
# heap itself (a pre-forking server) is left as it is.
@contextlib.asynccontextmanager
async def collect_only_the_drains_garbage() -> AsyncIterator[None]:
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


__all__ = [
    "DRAIN_SWITCH_INTERVAL_S",
    "collect_only_the_drains_garbage",
    "short_gil_switch_interval",
]
