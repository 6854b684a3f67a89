"""What the KV watch shows: per slot, who holds which place, as this process last saw it.

One watch per slot (an ordered consumer, last value per key first, then every change) keeps a
:class:`SlotView` current, so waiters sleep on it instead of polling. A direct read of every
place backs up a watch that has been silent for ``resync_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Container, Mapping
from typing import Any

from nats.js.errors import KeyNotFoundError

from model_foundry.lib.slots.leases.bucket import LeaseBucket
from model_foundry.lib.slots.leases.places import LeaseValue, Place, place_key

_DELETE_OPS = ("DEL", "PURGE")


class SlotView:
    """One slot's places as the watch shows them, and what this process's waiters do there."""

    def __init__(self, slot: str, parallel: int) -> None:
        self.slot = slot
        self.parallel = parallel
        self.places = [Place(place_key(slot, i), i) for i in range(parallel)]
        self.by_key = {p.key: p for p in self.places}
        # Keys a waiter of this process is trying right now, so waiters here never race.
        self.trying: set[str] = set()
        # Revision at which a take failed: not worth trying again until the view moves.
        self.failed_at: dict[str, int] = {}
        # Places this process handed back on purpose: left to other workers for a moment.
        self.yield_until: dict[str, float] = {}
        # Key -> lease id of a take whose reply never came: it may have landed, and then the
        # place is held by a lease nobody renews until the watch shows it and we give it back.
        self.unsure: dict[str, str] = {}
        self.last_update = time.monotonic()
        self.changed = asyncio.Event()
        self.watcher: Any = None
        self.watch_task: asyncio.Task[None] | None = None

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    def candidate(self, now: float, ttl: float, held: Container[str]) -> Place | None:
        """A free place, else a stale one, that no waiter here is trying and may succeed."""
        stale = None
        for p in self.places:
            if p.key in self.trying or self.failed_at.get(p.key) == p.revision:
                continue
            if self.yield_until.get(p.key, 0.0) > now:
                continue
            if p.value is None:
                return p
            if stale is None and p.key not in held and p.stale(now, ttl):
                stale = p
        return stale

    def next_change_at(self, now: float, ttl: float, held: Container[str]) -> float | None:
        """When a place this process waits on may become takeable without a watch update."""
        times = [
            p.seen_at + ttl
            for p in self.places
            if p.value is not None and p.key not in held and p.key not in self.trying
        ]
        times += [t for t in self.yield_until.values() if t > now]
        return min(times) if times else None

    def in_flight(self, now: float, ttl: float) -> int:
        return sum(1 for p in self.places if p.value is not None and not p.stale(now, ttl))

    def rows(self, now: float, ttl: float) -> list[dict[str, Any]]:
        return [
            {
                "key": p.key,
                "revision": p.revision,
                "holder": p.value.holder if p.value else None,
                "request": p.value.request if p.value else None,
                "stale": p.stale(now, ttl),
            }
            for p in self.places
        ]

    def apply(self, key: str, revision: int, value: LeaseValue | None) -> bool:
        """Move the view forward (never back); True when it changed."""
        place = self.by_key.get(key)
        self.last_update = time.monotonic()
        if place is None or revision <= place.revision:
            return False
        place.revision = revision
        place.value = value
        place.seen_at = time.monotonic()
        self.failed_at.pop(key, None)
        self.notify()
        return True


# Told of every newer revision a watch or a direct read shows: (view, key, revision, value).
OnNewer = Callable[[SlotView, str, int, LeaseValue | None], None]


class SlotWatches:
    """The watches that keep ``views`` current, and the direct read behind them."""

    def __init__(
        self, bucket: LeaseBucket, views: Mapping[str, SlotView], on_newer: OnNewer
    ) -> None:
        self.bucket = bucket
        self.views = views
        self.on_newer = on_newer

    async def start(self) -> None:
        # Side by side: each watch is a consumer to create and read to its end, a few round
        # trips that every batch otherwise waits for one slot after another.
        await asyncio.gather(*(self._watch(view) for view in self.views.values()))

    async def _watch(self, view: SlotView) -> None:
        self.bucket.ops.setup += 1
        view.watcher = await self.bucket.kv.watch(f"{view.slot}.*")
        ready = asyncio.get_running_loop().create_future()
        view.watch_task = asyncio.create_task(
            self._follow(view, ready), name=f"slot-lease-watch-{view.slot}"
        )
        # The first None marks the end of the current values: the view is complete.
        await asyncio.wait_for(ready, self.bucket.settings.op_timeout_s * 2)

    async def _follow(self, view: SlotView, ready: asyncio.Future[None]) -> None:
        async for entry in view.watcher:
            if entry is None:
                if not ready.done():
                    ready.set_result(None)
                continue
            self.bucket.ops.watch_updates += 1
            value = None if entry.operation in _DELETE_OPS else LeaseValue.decode(entry.value)
            if view.apply(entry.key, entry.revision, value):
                self.on_newer(view, entry.key, entry.revision, value)

    async def resync(self, view: SlotView) -> None:
        """Read every place directly: the watch has been silent longer than ``resync_s``."""
        view.last_update = time.monotonic()
        # A direct read is the truth: places that failed may be worth trying again.
        view.failed_at.clear()
        for p in view.places:
            self.bucket.ops.reads += 1
            try:
                entry = await self.bucket.kv.get(p.key)
            except KeyNotFoundError as exc:
                # Deleted or purged: free, at the revision of the marker if there is one.
                entry_rev = getattr(getattr(exc, "entry", None), "revision", None)
                if entry_rev:
                    view.apply(p.key, entry_rev, None)
                continue
            except Exception as exc:
                self.bucket.warn(f"reading lease {p.key} failed: {type(exc).__name__}")
                return
            value = LeaseValue.decode(entry.value or b"")
            if view.apply(p.key, entry.revision, value):
                self.on_newer(view, p.key, entry.revision, value)

    async def stop(self) -> None:
        for view in self.views.values():
            if view.watcher is not None:
                with contextlib.suppress(Exception):
                    await view.watcher.stop()
            if view.watch_task is not None:
                view.watch_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await view.watch_task


__all__ = ["OnNewer", "SlotView", "SlotWatches"]
