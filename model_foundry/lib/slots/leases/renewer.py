"""The renewer: one background loop that rewrites every held lease each renew interval.

It is stopped by a flag, never cancelled mid-renewal: on Python 3.11 nats-py's
``asyncio.wait_for`` can swallow a cancel (CPython gh-86296).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from nats.js.errors import KeyWrongLastSequenceError

from model_foundry.lib.slots.leases.held import HeldLeases
from model_foundry.lib.slots.leases.places import Lease


class LeaseRenewer:
    """Keeps every lease in ``held`` alive, and finds out when one was lost."""

    def __init__(self, held: HeldLeases) -> None:
        self.held = held
        self.bucket = held.bucket
        self.task: asyncio.Task[None] | None = None
        # Set by stop(): the loop ends on it, never by cancellation (see _loop).
        self._stopping = asyncio.Event()

    def start(self) -> None:
        self.task = asyncio.create_task(self._loop(), name="slot-lease-renewal")

    async def stop(self) -> None:
        self._stopping.set()
        if self.task is not None:
            # Not cancelled: a renewal cut off in flight may land without this process
            # learning its revision, and the release that follows would then miss and leave
            # the place held for a ttl. The loop ends after at most one renewal (op_timeout_s).
            timeout = self.bucket.settings.op_timeout_s * 2
            done, _ = await asyncio.wait({self.task}, timeout=timeout)
            if not done:
                self.task.cancel()

    async def _loop(self) -> None:
        # Ends when stop() sets _stopping, never by cancel(): on Python 3.11 a cancel that
        # arrives in the same loop turn as a KV reply is swallowed by the asyncio.wait_for
        # inside nats-py's request (CPython gh-86296, fixed in 3.12), and a loop that relied
        # on it would go on renewing, forever, the leases close() waits to give back.
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.bucket.settings.renew_interval_s)
            for lease in list(self.held.by_key.values()):
                if self._stopping.is_set():
                    return
                await self._renew(lease)

    async def _renew(self, lease: Lease) -> None:
        held, ops, ttl = self.held, self.bucket.ops, self.held.ttl
        async with lease.lock:
            if lease.released or lease.lost:
                return
            sent = time.monotonic()
            if sent >= lease.valid_until:
                held.lose(lease, f"no renewal succeeded for {ttl:.0f}s")
                return
            value = held.value(lease.lease_id, lease.request, time.time())
            try:
                revision = await held.update_ours(lease, value.encode())
            except KeyWrongLastSequenceError:
                ops.renewals += 1
                held.lose(lease, "the place was taken over (this worker missed its renewals)")
                return
            except Exception as exc:
                self.bucket.warn(f"renewing lease {lease.key} failed: {type(exc).__name__}")
                return
            ops.renewals += 1
            lease.revision = revision
            lease.valid_until = sent + ttl
            held.views[lease.slot].apply(lease.key, revision, value)


__all__ = ["LeaseRenewer"]
