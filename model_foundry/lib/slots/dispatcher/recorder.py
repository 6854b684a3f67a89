"""Hands every finished attempt to the caller's ``on_attempt``, off the loop, in order.

An ``on_attempt`` wrapped in :class:`InBatches` gets every attempt that finished while the
previous call ran, as one list, so a store can write them in one transaction (group commit).
One that ``grows`` returns the tasks those attempts made ready (a recipe row's next column),
and they join the running batch (``Batch.add``): the batch ends only once every attempt is
recorded and nothing new came of it.
A DuckDB file is one writer at a time across processes: with the inbox drains holding it, one
transaction per attempt made a run's pace the lock's, not the slots' (the freshness test's
summaries were stored about a minute after they were answered).

Opening the file costs the same CPU however few rows a transaction writes (docs/slots.md,
"What the client costs"), so while other work waits in the batch's queue (``more_work``) an
``InBatches`` call starts at most once every ``every_s``: attempts that settle meanwhile
join it. The slots stay busy with the queued work; when the queue is empty, or the batch
closes, nothing waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.dispatcher.progress import Progress
from model_foundry.lib.slots.dispatcher.tasks import Task


@dataclass(frozen=True)
class InBatches:
    """An ``on_attempt`` that takes the attempts waiting to be recorded together, oldest
    first. A list holds one attempt when nothing else is waiting. With ``grows``, ``record``
    returns the new tasks to run in the same batch (an iterable of ``Task``, maybe empty)."""

    record: Callable[[Sequence[Attempt]], Any]
    grows: bool = False


OnAttempt = Callable[[Attempt], Any] | Callable[[Attempt], Awaitable[Any]] | InBatches


class Recorder:
    """``in_thread``: a synchronous ``on_attempt`` runs in a worker thread. The first error it
    raises stops the batch and is kept in ``error`` for the batch to raise."""

    def __init__(
        self,
        on_attempt: OnAttempt | None,
        in_thread: bool,
        progress: Progress,
        *,
        every_s: float = 0.0,
        more_work: Callable[[], bool] = lambda: False,
    ) -> None:
        self.on_attempt = on_attempt
        self.in_thread = in_thread
        self.progress = progress
        self.every_s = every_s if isinstance(on_attempt, InBatches) else 0.0
        self.more_work = more_work
        self._last_call = -float("inf")
        self._closing = asyncio.Event()
        self._records: asyncio.Queue[Attempt | None] = asyncio.Queue()
        self.error: BaseException | None = None
        # Attempts put and not yet recorded: a growing batch is not over while any is.
        self.unrecorded = 0
        # Where the tasks a growing ``on_attempt`` returns go (``Batch.add``).
        self.on_new: Callable[[Sequence[Task]], None] | None = None

    @property
    def grows(self) -> bool:
        return isinstance(self.on_attempt, InBatches) and self.on_attempt.grows

    def put(self, attempt: Attempt) -> None:
        self.unrecorded += 1
        self._records.put_nowait(attempt)

    def close(self) -> None:
        """No more attempts: ``run`` ends once it has recorded those before."""
        self._records.put_nowait(None)
        self._closing.set()

    async def _pace(self) -> None:
        """Wait out the rest of ``every_s`` since the last call while work is queued."""
        loop = asyncio.get_running_loop()
        delay = self._last_call + self.every_s - loop.time()
        if delay > 0 and self.more_work() and not self._closing.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), delay)
        self._last_call = loop.time()

    async def run(self) -> None:
        while True:
            waiting = [await self._records.get()]
            if self.every_s and waiting[0] is not None:
                await self._pace()
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
            self.unrecorded -= len(attempts)
            # Workers waiting for the last attempts' record wake to new work or to finish.
            self.progress.notify()
            if None in waiting:
                return

    async def _record(self, on_attempt: OnAttempt, attempts: list[Attempt]) -> None:
        if isinstance(on_attempt, InBatches):
            new = await self._call(on_attempt.record, attempts)
            if on_attempt.grows and new and self.on_new is not None:
                self.on_new(list(new))
            return
        for attempt in attempts:
            await self._call(on_attempt, attempt)

    async def _call(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        if inspect.iscoroutinefunction(fn):
            return await fn(arg)
        result = await asyncio.to_thread(fn, arg) if self.in_thread else fn(arg)
        if inspect.isawaitable(result):
            return await result
        return result


__all__ = ["InBatches", "OnAttempt", "Recorder"]
