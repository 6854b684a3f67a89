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
    """One request from arrival until :meth:`leave` (called once, however often asked)."""

    def __init__(self, queue: SlotQueue) -> None:
        self._queue = queue
        self._counted = True

    def leave(self) -> None:
        # Called right before the last bytes go out, so a client that reacts to the end of a
        # response (and sends its next request) never sees itself counted twice.
        if self._counted:
            self._queue.stats.in_flight -= 1
            self._counted = False


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
        self, choose: Callable[[Sequence[int]], int] | None = None, pinned: int | None = None
    ) -> AsyncIterator[int]:
        """Wait for a free place; yields the slot id the request runs in: ``pinned`` (modulo
        ``parallel``, waiting until it is free, as llama-server's ``id_slot``), else the one
        ``choose`` picks from the free ids, else the one free longest."""
        want = None if pinned is None else pinned % self.parallel
        async with self._freed:
            await self._freed.wait_for(
                lambda: want in self.free_ids if want is not None else bool(self.free_ids)
            )
            if want is not None:
                slot_id = want
            else:
                slot_id = choose(self.free_ids) if choose is not None else self.free_ids[0]
            self.free_ids.remove(slot_id)
        s = self.stats
        s.processing += 1
        s.max_processing = max(s.max_processing, s.processing)
        try:
            yield slot_id
        finally:
            self.stats.processing -= 1
            async with self._freed:
                self.free_ids.append(slot_id)
                self._freed.notify_all()

    def busy_ids(self) -> set[int]:
        return set(range(self.parallel)) - set(self.free_ids)

    def reset(self) -> SlotStats:
        """Fresh counters that keep what is in flight right now."""
        self.stats = SlotStats(in_flight=self.stats.in_flight, processing=self.stats.processing)
        return self.stats


__all__ = ["SlotQueue", "SlotStats", "Visit"]
