"""Hands every finished attempt to the caller's ``on_attempt``, one at a time, off the loop."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from model_foundry.lib.slots.client import Attempt
from model_foundry.lib.slots.dispatcher.progress import Progress

OnAttempt = Callable[[Attempt], Any] | Callable[[Attempt], Awaitable[Any]]


class Recorder:
    """``in_thread``: a synchronous ``on_attempt`` runs in a worker thread. The first error it
    raises stops the batch and is kept in ``error`` for the batch to raise."""

    def __init__(self, on_attempt: OnAttempt | None, in_thread: bool, progress: Progress) -> None:
        self.on_attempt = on_attempt
        self.in_thread = in_thread
        self.progress = progress
        self._records: asyncio.Queue[Attempt | None] = asyncio.Queue()
        self.error: BaseException | None = None

    def put(self, attempt: Attempt) -> None:
        self._records.put_nowait(attempt)

    def close(self) -> None:
        """No more attempts: ``run`` ends once it has recorded those before."""
        self._records.put_nowait(None)

    async def run(self) -> None:
        while True:
            attempt = await self._records.get()
            if attempt is None:
                return
            if self.on_attempt is None or self.error is not None:
                continue
            try:
                if inspect.iscoroutinefunction(self.on_attempt):
                    await self.on_attempt(attempt)
                elif self.in_thread:
                    result = await asyncio.to_thread(self.on_attempt, attempt)
                    if inspect.isawaitable(result):
                        await result
                else:
                    result = self.on_attempt(attempt)
                    if inspect.isawaitable(result):
                        await result
            except Exception as exc:
                # Losing the record of an attempt breaks resumability: stop and surface it.
                self.error = exc
                self.progress.stop(f"on_attempt failed: {type(exc).__name__}: {exc}")


__all__ = ["OnAttempt", "Recorder"]
