"""A worker's place on its slot: one of the ``parallel`` places the batch's limiter keeps."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from model_foundry.lib.slots.dispatcher.tasks import DispatchOptions
from model_foundry.lib.slots.limiter import Limiter


class HeldPlace:
    """One worker's place on its slot, kept across consecutive requests for a while.

    Taking and giving back a place costs a round trip to NATS each; a worker with more work
    for its slot keeps its place for up to ``place_hold_s`` and then hands it back, giving
    workers in other processes ``handoff_s`` to take it before this process may again.
    """

    def __init__(self, limiter: Limiter, slot: str, options: DispatchOptions) -> None:
        self.limiter = limiter
        self.slot = slot
        self.options = options
        self.held: Any = None
        self.since = 0.0
        self.lost = asyncio.Event()

    @property
    def index(self) -> int | None:
        """Which of the slot's places is held (0 .. parallel - 1); None when none is."""
        index = getattr(self.held, "index", None)
        return index if isinstance(index, int) else None

    async def take(self, give_up: Callable[[], bool], wake: Callable[[], Awaitable[Any]]) -> bool:
        if self.held is not None:
            if self.limiter.still_valid(self.held):
                return True
            # Renewals fell behind (a frozen process, a slow NATS): a waiter elsewhere may
            # take this place any moment, so no new request starts on it.
            await self.release()
        self.lost = asyncio.Event()
        self.held = await self.limiter.acquire(self.slot, give_up, on_lost=self.lost.set, wake=wake)
        self.since = time.monotonic()
        return self.held is not None

    async def take_free(self, most: int) -> list[Any]:
        """Up to ``most`` more places of the slot that are free right now, never waiting for
        one (a request with ``n`` choices holds one place per choice); each one lost sets
        :attr:`lost` too. Give them back with :meth:`release_extra` after the request."""
        extra: list[Any] = []
        while len(extra) < most:
            held = await self.limiter.acquire(
                self.slot,
                _once(),
                on_lost=self.lost.set,
                wake=_at_once,
            )
            if held is None:
                break
            extra.append(held)
        return extra

    async def release_extra(self, extra: list[Any]) -> None:
        for held in extra:
            await self.limiter.release(held)

    async def after_request(self) -> None:
        if self.lost.is_set():
            # Taken over while held: nothing to give back (the limiter knows).
            await self.release()
        elif time.monotonic() - self.since >= self.options.place_hold_s:
            await self.release(handoff_s=self.options.handoff_s)

    async def release(self, handoff_s: float = 0.0) -> None:
        held, self.held = self.held, None
        if held is not None:
            await self.limiter.release(held, handoff_s=handoff_s)


def _once() -> Callable[[], bool]:
    """A ``give_up`` that lets the limiter look once: False the first time, then True."""
    looked = iter((False,))
    return lambda: next(looked, True)


async def _at_once() -> bool:
    """A ``wake`` that never waits: a place that is not free right now is not waited for."""
    return True


__all__ = ["HeldPlace"]
