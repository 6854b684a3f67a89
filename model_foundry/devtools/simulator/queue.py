"""A simulated slot's parallel accounting: requests in flight, the queue, its slot ids."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass


@dataclass
class SlotStats:
    in_flight: int = 0
    max_in_flight: int = 0
    processing: int = 0
    max_processing: int = 0
    requests: int = 0
    completed: int = 0
    errors: int = 0
    dropped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Of prompt_tokens, those a place's prompt cache held (llama.cpp-shaped slots only).
    cached_tokens: int = 0


class Visit:
    """One request from arrival until :meth:`leave` (called once, however often asked); it
    counts as its ``sequences`` (its ``n`` choices) in flight."""

    def __init__(self, queue: SlotQueue) -> None:
        self._queue = queue
        # One until the body says how many choices (``count``).
        self.sequences = 1
        self._counted = True

    def leave(self) -> None:
        # Called right before the last bytes go out, so a client that reacts to the end of a
        # response (and sends its next request) never sees itself counted twice.
        if self._counted:
            self._queue.stats.in_flight -= self.sequences
            self._counted = False

    def count(self, sequences: int) -> None:
        """Now known to be a request of ``sequences`` choices (read from its body)."""
        if self._counted and sequences != self.sequences:
            s = self._queue.stats
            s.in_flight += sequences - self.sequences
            s.max_in_flight = max(s.max_in_flight, s.in_flight)
            self.sequences = sequences


class SlotQueue:
    """Like the real servers: at most ``parallel`` requests run, the rest wait their turn."""

    def __init__(self, parallel: int) -> None:
        self.parallel = parallel
        self.stats = SlotStats()
        self._freed = asyncio.Condition()
        self.free_ids = list(range(parallel))

    def arrive(self) -> Visit:
        s = self.stats
        s.requests += 1
        s.in_flight += 1
        s.max_in_flight = max(s.max_in_flight, s.in_flight)
        return Visit(self)

    @contextlib.asynccontextmanager
    async def processing(
        self,
        choose: Callable[[Sequence[int]], int] | None = None,
        pinned: int | None = None,
        sequences: int = 1,
    ) -> AsyncIterator[list[int]]:
        """Wait for ``sequences`` free places at once (a request with ``n`` choices, as
        llama-server defers one until n of its slots are free); yields the slot ids it runs
        in, its own first: ``pinned`` (modulo ``parallel``, waiting until it is free, as
        llama-server's ``id_slot``), else the one ``choose`` picks from the free ids, else
        the one free longest; its other choices take the free ones longest free."""
        want = None if pinned is None else pinned % self.parallel

        def ready() -> bool:
            enough = len(self.free_ids) >= sequences
            return enough and (want is None or want in self.free_ids)

        async with self._freed:
            await self._freed.wait_for(ready)
            if want is not None:
                slot_id = want
            else:
                slot_id = choose(self.free_ids) if choose is not None else self.free_ids[0]
            self.free_ids.remove(slot_id)
            ids = [slot_id, *self.free_ids[: sequences - 1]]
            del self.free_ids[: sequences - 1]
        s = self.stats
        s.processing += sequences
        s.max_processing = max(s.max_processing, s.processing)
        try:
            yield ids
        finally:
            self.stats.processing -= sequences
            async with self._freed:
                self.free_ids.extend(ids)
                self._freed.notify_all()

    def busy_ids(self) -> set[int]:
        return set(range(self.parallel)) - set(self.free_ids)

    def reset(self) -> SlotStats:
        """Fresh counters that keep what is in flight right now."""
        self.stats = SlotStats(in_flight=self.stats.in_flight, processing=self.stats.processing)
        return self.stats


__all__ = ["SlotQueue", "SlotStats", "Visit"]
