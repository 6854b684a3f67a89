"""What every benchmark that measures in a fresh process needs: the child, and its peak memory.

A fresh process per measured side keeps one side's imports, caches and heap out of the
other's figures; each child puts its result on a queue and ends.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import resource
import sys
from typing import Any


def in_fresh_process(target: Any, *args: Any, timeout_s: float | None = None) -> Any:
    """Run ``target(*args, queue)`` in a spawned process; what it put on ``queue``."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    result = queue.get(timeout=timeout_s)
    proc.join()
    return result


def peak_rss_mb() -> float:
    """This process's own peak resident memory in MB.

    Not ``ru_maxrss``: Linux carries the high-water mark of the memory a process had before
    ``exec`` into it, and a spawned child's memory before ``exec`` is a copy of the parent's.
    With ``--prefill`` the parent has just written millions of rows through DuckDB, so every
    child would report the parent's peak. ``VmHWM`` is the peak of the process's current memory
    map, which ``exec`` starts afresh."""
    with contextlib.suppress(OSError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)  # the kernel reports KiB
    # Without /proc (not Linux): ru_maxrss, KiB on Linux and bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


__all__ = ["in_fresh_process", "peak_rss_mb"]
