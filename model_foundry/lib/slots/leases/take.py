"""Taking a place: waiting on the watch view, then a compare-and-set on the revision seen.

Waiting costs no polling: waiters sleep on their slot's view and do a KV operation only when
it shows a free or stale place that no other waiter in this process is already trying.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.client import Client as NATS
from nats.js.errors import KeyWrongLastSequenceError

from model_foundry.lib.slots.leases.bucket import LeaseError
from model_foundry.lib.slots.leases.held import HeldLeases
from model_foundry.lib.slots.leases.places import Lease, Place
from model_foundry.lib.slots.leases.watch import SlotView, SlotWatches

log = logging.getLogger(__name__)


class LeaseTaker:
    """The waiters of this process; ``closed`` (set on close) makes every one give up."""

    def __init__(self, nc: NATS, held: HeldLeases, watches: SlotWatches) -> None:
        self.nc = nc
        self.held = held
        self.watches = watches
        self.bucket = held.bucket
        self.closed = False

    async def acquire(
        self,
        view: SlotView,
        give_up: Callable[[], bool],
        request: str | None,
        on_lost: Callable[[], None] | None,
        wake: Callable[[], Awaitable[Any]] | None,
    ) -> Lease | None:
        settings, ttl = self.bucket.settings, self.held.ttl
        while True:
            if give_up() or self.closed:
                return None
            if self.nc.is_closed:
                raise LeaseError(
                    "the connection to NATS closed, so slot leases can no longer be taken; "
                    "check that NATS is running"
                )
            now = time.monotonic()
            place = view.candidate(now, ttl, self.held.by_key)
            if place is not None:
                lease = await self._try_take(view, place, request, on_lost)
                if lease is not None:
                    return lease
                continue
            if now - view.last_update >= settings.resync_s:
                await self.watches.resync(view)
                continue
            await self._sleep(view, now, wake)

    async def _sleep(
        self, view: SlotView, now: float, wake: Callable[[], Awaitable[Any]] | None
    ) -> None:
        settings = self.bucket.settings
        deadline = min(
            t
            for t in (
                now + settings.max_wait_s,
                view.last_update + settings.resync_s,
                view.next_change_at(now, self.held.ttl, self.held.by_key),
            )
            if t is not None
        )
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(view.changed.wait())]
        if wake is not None:
            waits.append(asyncio.ensure_future(wake()))
        try:
            await asyncio.wait(
                waits, timeout=max(deadline - now, 0.0) + 0.001, return_when="FIRST_COMPLETED"
            )
        finally:
            for w in waits:
                w.cancel()

    async def _try_take(
        self,
        view: SlotView,
        place: Place,
        request: str | None,
        on_lost: Callable[[], None] | None,
    ) -> Lease | None:
        ops, ttl = self.bucket.ops, self.held.ttl
        view.trying.add(place.key)
        seen = place.revision
        stealing = place.value is not None
        lease_id = secrets.token_hex(6)
        sent = time.monotonic()
        value = self.held.value(lease_id, request, time.time())
        try:
            revision = await self.bucket.kv.update(place.key, value.encode(), last=seen)
        except KeyWrongLastSequenceError:
            ops.take_conflicts += 1
            view.failed_at[place.key] = seen
            return None
        except BaseException as exc:
            # No reply (a timeout, NATS busy or electing a leader, or this waiter cancelled
            # mid-take): the take may still have landed, so the watch gives the place back if
            # it shows this lease id. The view is not known to be wrong, so try again after a
            # pause instead of waiting for the view to move.
            view.unsure[place.key] = lease_id
            if not isinstance(exc, Exception):
                raise
            self.bucket.warn(f"taking a lease on {place.key} failed: {type(exc).__name__}")
            await asyncio.sleep(self.bucket.settings.error_pause_s * random.uniform(0.5, 1.5))
            return None
        finally:
            view.trying.discard(place.key)
        ops.takes += 1
        if stealing:
            ops.steals += 1
            log.info("took over %s from %s (stale for %.1fs)", place.key, place.value, ttl)
        lease = Lease(
            slot=view.slot,
            key=place.key,
            index=place.index,
            lease_id=lease_id,
            revision=revision,
            request=request,
            taken_at=sent,
            valid_until=sent + ttl,
            on_lost=on_lost,
        )
        self.held.by_key[place.key] = lease
        view.apply(place.key, revision, value)
        return lease


__all__ = ["LeaseTaker"]
