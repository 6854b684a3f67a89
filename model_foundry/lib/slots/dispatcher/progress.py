"""Whether a batch goes on, and the event its idle workers sleep on until something changes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable


class Progress:
    """``stopping`` once the batch must start nothing new (and why); ``changed`` is replaced on
    every ``notify``, so a waiter that took it before awaiting never misses a change."""

    def __init__(self, batch_timeout_s: float | None) -> None:
        self.batch_timeout_s = batch_timeout_s
        self.stopping = False
        self.stop_reason: str | None = None
        self.deadline = time.monotonic() + batch_timeout_s if batch_timeout_s else None
        self.changed = asyncio.Event()

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    def stop(self, reason: str) -> None:
        if not self.stopping:
            self.stopping = True
            self.stop_reason = reason
            self.notify()

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.stop(f"batch timeout of {self.batch_timeout_s}s reached")

    async def wait(
        self, now: float, timers: Iterable[float | None], changed: asyncio.Event | None = None
    ) -> None:
        """Until the batch changes (``changed``: the event as it was before the caller last
        awaited something, so a change meanwhile is not missed), a timer or the deadline."""
        wakeups = [t for t in (*timers, self.deadline) if t is not None]
        # Bounded so that a missed notification can only cost a moment, never a hang.
        timeout = min([1.0, *[max(t - now, 0.0) + 0.001 for t in wakeups]])
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for((changed or self.changed).wait(), timeout)


__all__ = ["Progress"]
