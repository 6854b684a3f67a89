"""``NatsLeaseLimiter``: the lease parts put together behind the slot limiter interface."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from nats.aio.client import Client as NATS

from model_foundry.lib.slots.leases.bucket import LeaseBucket, LeaseError, LeaseOps, LeaseSettings
from model_foundry.lib.slots.leases.held import HeldLeases
from model_foundry.lib.slots.leases.places import Lease, holder_id
from model_foundry.lib.slots.leases.renewer import LeaseRenewer
from model_foundry.lib.slots.leases.take import LeaseTaker
from model_foundry.lib.slots.leases.watch import SlotView, SlotWatches


class NatsLeaseLimiter:
    """Per slot, ``parallel`` places in a NATS KV bucket, shared by every process that uses it.

    ``slots`` maps slot name to ``parallel``. Every worker must use the same slot file, since
    each one only uses the places ``0 .. parallel-1`` its own file names.
    """

    kind = "nats"

    def __init__(
        self,
        nc: NATS,
        slots: Mapping[str, int],
        settings: LeaseSettings | None = None,
        *,
        holder: str | None = None,
        where: str | None = None,
    ) -> None:
        self.nc = nc
        # The servers, without credentials, for run metadata.
        self.where = where
        self.settings = settings or LeaseSettings()
        self.holder = holder or holder_id()
        self.ops = LeaseOps()
        self._bucket = LeaseBucket(self.settings, self.ops)
        self._views = {name: SlotView(name, n) for name, n in slots.items()}
        self._held = HeldLeases(self._bucket, self._views, self.holder)
        self._watches = SlotWatches(self._bucket, self._views, self._held.check_ours)
        self._taker = LeaseTaker(nc, self._held, self._watches)
        self._renewer = LeaseRenewer(self._held)
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> NatsLeaseLimiter:
        await self._bucket.open(self.nc.jetstream(timeout=self.settings.op_timeout_s))
        await self._watches.start()
        self._renewer.start()
        return self

    async def close(self) -> None:
        """Release what is still held and stop watching; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._taker.closed = True
        await self._renewer.stop()
        for lease in list(self._held.by_key.values()):
            with contextlib.suppress(Exception):
                await self.release(lease)
        await self._held.wait_given_back()
        await self._watches.stop()

    async def __aenter__(self) -> NatsLeaseLimiter:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- what the metrics exporter reads ------------------------------------------------------

    def parallel(self, slot: str) -> int:
        return self._views[slot].parallel

    def in_flight(self, slot: str) -> int:
        """Places of ``slot`` held by a live lease, by every worker (stale leases excluded)."""
        return self._views[slot].in_flight(time.monotonic(), self.ttl)

    def report(self) -> dict[str, Any]:
        """For run metadata: which bucket on which servers, the bound, the KV operations."""
        return {
            "kind": self.kind,
            "where": f"bucket {self.settings.bucket} on {self.where or 'NATS'}",
            "lease_ttl_s": self.ttl,
            "kv_ops": self.ops.as_dict(),
        }

    def still_valid(self, lease: Lease) -> bool:
        """Whether ``lease`` is safe to start another request on: not lost, and more than a
        renewal interval before the moment a waiter elsewhere may take it over."""
        margin = self.settings.renew_interval_s
        return not lease.lost and time.monotonic() < lease.valid_until - margin

    def held_here(self, slot: str) -> int:
        return sum(1 for lease in self._held.by_key.values() if lease.slot == slot)

    def places(self, slot: str) -> list[dict[str, Any]]:
        """Each place as a row (key, revision, holder, request, stale) for people and tests."""
        return self._views[slot].rows(time.monotonic(), self.ttl)

    @property
    def ttl(self) -> float:
        return self.settings.ttl_s

    # -- taking and giving back ---------------------------------------------------------------

    async def acquire(
        self,
        slot: str,
        give_up: Callable[[], bool] = lambda: False,
        *,
        request: str | None = None,
        on_lost: Callable[[], None] | None = None,
        wake: Callable[[], Awaitable[Any]] | None = None,
    ) -> Lease | None:
        """A place of ``slot``, or None as soon as ``give_up()`` says it is no longer needed.

        ``wake`` (optional) returns an awaitable that completes when the caller's own state
        changed, so ``give_up`` is asked again at once instead of after ``max_wait_s``.
        ``on_lost`` is called if the lease is lost while held (see the package doc).
        """
        if not self._bucket.opened:
            raise LeaseError("the slot lease limiter was used before start()")
        return await self._taker.acquire(self._views[slot], give_up, request, on_lost, wake)

    async def refresh(self) -> None:
        """Read every place of every slot directly, for a reader that never waits for a place
        (a waiter resyncs by itself when its watch has been silent for ``resync_s``)."""
        for view in self._views.values():
            await self._watches.resync(view)

    async def release(self, lease: Lease, *, handoff_s: float = 0.0) -> None:
        """Free the place if it is still ours; never raises (a lost release expires by itself).

        ``handoff_s`` > 0: the caller still has work but held the place for long enough; other
        workers get that long to take it before a waiter of this process may.
        """
        await self._held.release(lease, handoff_s=handoff_s)


__all__ = ["NatsLeaseLimiter"]
