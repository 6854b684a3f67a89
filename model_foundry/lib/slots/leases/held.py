"""The places this process holds, and every write to their keys after the take.

Lost replies are handled here: a held lease adopts the newer revision of its own write, and a
take whose reply never came is given back as soon as the watch shows it (see the package doc).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping

from nats.js.errors import KeyWrongLastSequenceError

from model_foundry.lib.slots.leases.bucket import LeaseBucket
from model_foundry.lib.slots.leases.places import Lease, LeaseValue
from model_foundry.lib.slots.leases.watch import SlotView

log = logging.getLogger(__name__)


class HeldLeases:
    """``by_key``: the leases of this process still held, by key."""

    def __init__(self, bucket: LeaseBucket, views: Mapping[str, SlotView], holder: str) -> None:
        self.bucket = bucket
        self.views = views
        self.holder = holder
        self.by_key: dict[str, Lease] = {}
        self._background: set[asyncio.Task[None]] = set()

    @property
    def ttl(self) -> float:
        return self.bucket.settings.ttl_s

    def value(self, lease_id: str, request: str | None, taken_at: float) -> LeaseValue:
        now = time.time()
        return LeaseValue(
            holder=self.holder,
            lease_id=lease_id,
            request=request[:200] if request else None,
            taken_at=taken_at,
            renewed_at=now,
            expires_at=now + self.ttl,
        )

    def check_ours(self, view: SlotView, key: str, revision: int, value: LeaseValue | None) -> None:
        """React to a newer revision of ``key``: our own write (adopt its revision), a take of
        ours whose reply never came (give the place back), or someone else's take of a place
        we hold (the lease is lost)."""
        unsure = view.unsure.pop(key, None)
        if value is not None and unsure is not None and value.lease_id == unsure:
            self._give_back_later(key, revision)
            return
        lease = self.by_key.get(key)
        if lease is None or lease.released:
            return
        if value is None or value.lease_id != lease.lease_id:
            self.lose(lease, "the place was taken over (this worker missed its renewals)")
        elif revision > lease.revision:
            # A renewal of ours whose reply was lost (timeout, or cancelled in flight): the
            # next renewal or the release must compare against this revision, not the old one.
            lease.revision = revision

    def _give_back_later(self, key: str, revision: int) -> None:
        """Free a place a take of ours got although its reply never came; no one holds it."""

        async def give_back() -> None:
            try:
                await self.bucket.kv.update(key, b"", last=revision)
                self.bucket.ops.releases += 1
            except KeyWrongLastSequenceError:
                self.bucket.ops.release_conflicts += 1
            except Exception as exc:
                self.bucket.warn(f"giving back {key} failed ({type(exc).__name__})")

        task = asyncio.get_running_loop().create_task(give_back(), name=f"give-back-{key}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def wait_given_back(self) -> None:
        """Until every give-back under way has ended (each is bounded by its own timeout)."""
        for task in list(self._background):
            with contextlib.suppress(Exception):
                await asyncio.wait({task}, timeout=self.bucket.settings.op_timeout_s * 2)

    def lose(self, lease: Lease, why: str) -> None:
        if lease.lost or lease.released:
            return
        lease.lost = True
        self.bucket.ops.lost += 1
        self.by_key.pop(lease.key, None)
        log.warning("lost slot lease %s: %s", lease.key, why)
        if lease.on_lost is not None:
            lease.on_lost()

    async def release(self, lease: Lease, *, handoff_s: float = 0.0) -> None:
        """Free the place if it is still ours; never raises (see ``NatsLeaseLimiter.release``)."""
        ops = self.bucket.ops
        if handoff_s > 0:
            self.views[lease.slot].yield_until[lease.key] = time.monotonic() + handoff_s
        async with lease.lock:
            if lease.released:
                return
            lease.released = True
            self.by_key.pop(lease.key, None)
            if lease.lost:
                return
            try:
                revision = await self.update_ours(lease, b"")
            except KeyWrongLastSequenceError:
                ops.release_conflicts += 1
                return
            except Exception as exc:
                self.bucket.warn(
                    f"releasing lease {lease.key} failed ({type(exc).__name__}); it returns "
                    f"by itself within {self.ttl:.0f}s"
                )
                return
            ops.releases += 1
            self.views[lease.slot].apply(lease.key, revision, None)

    async def update_ours(self, lease: Lease, value: bytes) -> int:
        """Compare-and-set ``lease.key`` against the lease's revision. If that misses, the key
        may still hold this very lease at a newer revision (a renewal of ours landed but its
        reply was lost and the watch has not shown it yet): then once more at that revision.
        Raises ``KeyWrongLastSequenceError`` when the place is someone else's."""
        try:
            return await self.bucket.kv.update(lease.key, value, last=lease.revision)
        except KeyWrongLastSequenceError:
            self.bucket.ops.reads += 1
            try:
                entry = await self.bucket.kv.get(lease.key)
            except Exception:
                entry = None
            current = LeaseValue.decode(entry.value or b"") if entry is not None else None
            if entry is None or current is None or current.lease_id != lease.lease_id:
                raise
            if entry.revision <= lease.revision:
                raise
            lease.revision = entry.revision
            return await self.bucket.kv.update(lease.key, value, last=lease.revision)


__all__ = ["HeldLeases"]
