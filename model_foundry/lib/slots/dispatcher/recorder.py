"""Hands every finished attempt to the caller's ``on_attempt``, off the loop, in order.

An ``on_attempt`` wrapped in :class:`InBatches` gets every attempt that finished while the
previous call ran, as one list, so a store can write them in one transaction (group commit).
A DuckDB file is one writer at a time across processes: with the inbox drains holding it, one
transaction per attempt made a run's pace the lock's, not the slots' (the freshness test's
summaries were stored about a minute after they were answered).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from model_foundry.lib.slots.client import Attempt
from model_foundry.lib.slots.dispatcher.progress import Progress


@dataclass(frozen=True)
class InBatches:
    """An ``on_attempt`` that takes the attempts waiting to be recorded together, oldest
    first. A list holds one attempt when nothing else is waiting."""

    record: Callable[[Sequence[Attempt]], Any]


OnAttempt = Callable[[Attempt], Any] | Callable[[Attempt], Awaitable[Any]] | InBatches


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
            waiting = [await self._records.get()]
            while not self._records.empty():
                waiting.append(self._records.get_nowait())
            attempts = [a for a in waiting if a is not None]
            if attempts and self.on_attempt is not None and self.error is None:
                try:
                    await self._record(self.on_attempt, attempts)
                except Exception as exc:
                    # Losing the record of an attempt breaks resumability: stop and surface it.
                    self.error = exc
                    self.progress.stop(f"on_attempt failed: {type(exc).__name__}: {exc}")
            if None in waiting:
                return

    async def _record(self, on_attempt: OnAttempt, attempts: list[Attempt]) -> None:
        if isinstance(on_attempt, InBatches):
            await self._call(on_attempt.record, attempts)
            return
        for attempt in attempts:
            await self._call(on_attempt, attempt)

    async def _call(self, fn: Callable[[Any], Any], arg: Any) -> None:
        if inspect.iscoroutinefunction(fn):
            await fn(arg)
            return
        result = await asyncio.to_thread(fn, arg) if self.in_thread else fn(arg)
        if inspect.isawaitable(result):
            await result


__all__ = ["InBatches", "OnAttempt", "Recorder"]
