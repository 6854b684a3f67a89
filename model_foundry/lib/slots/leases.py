"""Slot leases on NATS JetStream key-value: one in-flight limit shared by every worker.

The flock limiter keeps a slot's ``parallel`` promise on one machine. Workers on several
machines (a second Dagster box, the Docker or K8s run launcher) all reach NATS, so the places
live there instead:

- One bucket (``model_foundry_slot_leases``, history 1, no TTL) and, per slot, ``parallel``
  keys ``<slot>.<i>``. A key's value is empty (the place is free), absent or deleted (also
  free), or a JSON lease: holder, lease id, request, times.
- **Take**: ``update(key, lease, last=<revision seen>)``. JetStream applies it only if the
  key's last revision is still the one seen (``Nats-Expected-Last-Subject-Sequence``), so of
  two workers racing for a place exactly one wins; the loser gets "wrong last sequence".
- **Release**: ``update(key, b"", last=<our revision>)``, so a worker can only free a place
  that is still its own.
- **Renew**: a live holder rewrites its lease every ``renew_every_s`` with the same check.
- **A dead holder**: nobody renews its lease, so the key's revision stops changing. A waiter
  that has seen the same revision for ``ttl_s`` by its *own* monotonic clock takes the place
  with a compare-and-set on that revision. No per-key TTL is needed (NATS 2.9 has none) and
  clocks on different machines never have to agree; the ``expires_at`` in the value is for
  people and dashboards only.
- **A stalled holder** cannot be told from a dead one. It treats its lease as good only until
  ``ttl_s`` after it *sent* its last successful renewal (a waiter cannot have started
  counting earlier), and learns of a takeover from the watch or its next renewal; then
  ``on_lost`` fires and the dispatcher cancels that request, closing its connection.
- **A write whose reply is lost** (a timeout, a cancelled call) may still have been applied.
  Lease ids are unique, so when the watch shows this process's lease id at a newer revision,
  a held lease adopts that revision (its next renewal or release does not miss and lose the
  place), and a take nobody waits for any more is given back at once instead of after ttl_s.
  The renewer is stopped by a flag, never cancelled mid-renewal: on Python 3.11 nats-py's
  ``asyncio.wait_for`` can swallow a cancel (CPython gh-86296).
- **Waiting costs no polling**: one watch per slot (an ordered consumer, last value per key
  first, then every change) keeps a local view of the places. Waiters sleep on that view and
  do a KV operation only when it shows a free or stale place that no other waiter in this
  process is already trying. If the watch stays silent for ``resync_s`` while someone waits,
  the places are read once directly, in case the watch missed a change.

Every KV call is counted in ``LeaseOps`` so a benchmark can report operations per request.

Behaviour relied on (nats-py 2.x ``nats/js/kv.py``): ``KeyValue.update`` raises
``KeyWrongLastSequenceError`` on a failed check; ``update(..., last=0)`` succeeds only if the
key has no message; watch entries carry the stream revision and ``operation`` DEL/PURGE.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Container, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

log = logging.getLogger(__name__)

DEFAULT_BUCKET = "model_foundry_slot_leases"
_DELETE_OPS = ("DEL", "PURGE")


class LeaseError(RuntimeError):
    """The lease bucket cannot be reached or used; one sentence, no secrets."""


@dataclass(frozen=True)
class LeaseSettings:
    bucket: str = DEFAULT_BUCKET
    # A dead holder's place returns at most this long after its last renewal (or after a
    # waiter started waiting, if later), plus the moment the waiter needs to wake.
    ttl_s: float = 30.0
    # Default ttl_s / 4: three renewals may fail in a row before a live holder is at risk.
    renew_every_s: float | None = None
    # Read the places directly when the watch has been silent this long while someone waits.
    resync_s: float = 10.0
    # Longest sleep of a waiter between local checks when nothing wakes it.
    max_wait_s: float = 1.0
    replicas: int = 1
    op_timeout_s: float = 5.0
    # Pause after a KV operation failed for a reason other than a lost race.
    error_pause_s: float = 0.2

    @property
    def renew_interval_s(self) -> float:
        return self.renew_every_s if self.renew_every_s else self.ttl_s / 4

    def __post_init__(self) -> None:
        if self.ttl_s <= 0:
            raise ValueError("lease ttl_s must be > 0")
        if self.renew_interval_s >= self.ttl_s:
            raise ValueError("lease renew_every_s must be shorter than ttl_s")


@dataclass
class LeaseOps:
    """KV operations this process made (``setup`` is not in ``total``: it does not grow with the
    work); ``takes`` counts places taken, each of which may serve several requests in a row."""

    takes: int = 0
    take_conflicts: int = 0
    steals: int = 0
    renewals: int = 0
    releases: int = 0
    release_conflicts: int = 0
    reads: int = 0
    setup: int = 0
    errors: int = 0
    lost: int = 0
    # Not operations: changes the watches pushed to this process.
    watch_updates: int = 0

    @property
    def total(self) -> int:
        return (
            self.takes
            + self.take_conflicts
            + self.renewals
            + self.releases
            + self.release_conflicts
            + self.reads
            + self.errors
        )

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total}


@dataclass(frozen=True)
class LeaseValue:
    """What a held place's key says. Wall-clock times are for people, never for decisions."""

    holder: str
    lease_id: str
    request: str | None
    taken_at: float
    renewed_at: float
    expires_at: float

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> LeaseValue | None:
        """None for a free place; an unreadable value counts as held by someone unknown."""
        if not raw:
            return None
        try:
            data = json.loads(raw)
            return cls(
                holder=str(data["holder"]),
                lease_id=str(data["lease_id"]),
                request=data.get("request"),
                taken_at=float(data["taken_at"]),
                renewed_at=float(data["renewed_at"]),
                expires_at=float(data["expires_at"]),
            )
        except (ValueError, KeyError, TypeError):
            return cls("unknown", "unknown", None, 0.0, 0.0, 0.0)


@dataclass
class Place:
    """This process's view of one key: its last revision and since when it has seen it."""

    key: str
    index: int
    revision: int = 0
    value: LeaseValue | None = None
    seen_at: float = field(default_factory=time.monotonic)

    def stale(self, now: float, ttl_s: float) -> bool:
        return self.value is not None and now - self.seen_at >= ttl_s


@dataclass
class Lease:
    """A place this process holds for one request."""

    slot: str
    key: str
    index: int
    lease_id: str
    revision: int
    request: str | None
    taken_at: float
    # Monotonic: the holder's own last moment of certain ownership (see the module doc).
    valid_until: float
    on_lost: Callable[[], None] | None = None
    lost: bool = False
    released: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)


def place_key(slot: str, index: int) -> str:
    return f"{slot}.{index}"


def holder_id() -> str:
    """Host, pid and a random suffix: unique per limiter, readable in the bucket."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class _SlotView:
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
        self._views = {name: _SlotView(name, n) for name, n in slots.items()}
        self._held: dict[str, Lease] = {}
        self._kv: KeyValue | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._closed = False
        # Set by close(): the renewer stops on it, never by cancellation (see _renew_loop).
        self._stopping = asyncio.Event()
        self._background: set[asyncio.Task[None]] = set()
        self._last_warning = -1e9

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> NatsLeaseLimiter:
        js = self.nc.jetstream(timeout=self.settings.op_timeout_s)
        self._kv = await self._bucket(js)
        # Side by side: each watch is a consumer to create and read to its end, a few round
        # trips that every batch otherwise waits for one slot after another.
        await asyncio.gather(*(self._watch(view) for view in self._views.values()))
        self._renewer = asyncio.create_task(self._renew_loop(), name="slot-lease-renewal")
        return self

    async def _bucket(self, js: JetStreamContext) -> KeyValue:
        self.ops.setup += 1
        try:
            return await js.key_value(self.settings.bucket)
        except BucketNotFoundError:
            pass
        self.ops.setup += 1
        config = KeyValueConfig(
            bucket=self.settings.bucket,
            description="model-foundry slot leases: one key per parallel place of each slot",
            history=1,
            storage=StorageType.FILE,
            replicas=self.settings.replicas,
            max_value_size=1024,
            direct=True,
        )
        try:
            return await js.create_key_value(config)
        except Exception:
            # Another worker created it a moment ago, possibly with other replicas: use theirs.
            self.ops.setup += 1
            return await js.key_value(self.settings.bucket)

    async def _watch(self, view: _SlotView) -> None:
        assert self._kv is not None
        self.ops.setup += 1
        view.watcher = await self._kv.watch(f"{view.slot}.*")
        ready = asyncio.get_running_loop().create_future()
        view.watch_task = asyncio.create_task(
            self._follow(view, ready), name=f"slot-lease-watch-{view.slot}"
        )
        # The first None marks the end of the current values: the view is complete.
        await asyncio.wait_for(ready, self.settings.op_timeout_s * 2)

    async def _follow(self, view: _SlotView, ready: asyncio.Future[None]) -> None:
        async for entry in view.watcher:
            if entry is None:
                if not ready.done():
                    ready.set_result(None)
                continue
            self.ops.watch_updates += 1
            value = None if entry.operation in _DELETE_OPS else LeaseValue.decode(entry.value)
            if view.apply(entry.key, entry.revision, value):
                self._check_ours(view, entry.key, entry.revision, value)

    def _check_ours(
        self, view: _SlotView, key: str, revision: int, value: LeaseValue | None
    ) -> None:
        """React to a newer revision of ``key``: our own write (adopt its revision), a take of
        ours whose reply never came (give the place back), or someone else's take of a place
        we hold (the lease is lost)."""
        unsure = view.unsure.pop(key, None)
        if value is not None and unsure is not None and value.lease_id == unsure:
            self._give_back_later(key, revision)
            return
        lease = self._held.get(key)
        if lease is None or lease.released:
            return
        if value is None or value.lease_id != lease.lease_id:
            self._lose(lease, "the place was taken over (this worker missed its renewals)")
        elif revision > lease.revision:
            # A renewal of ours whose reply was lost (timeout, or cancelled in flight): the
            # next renewal or the release must compare against this revision, not the old one.
            lease.revision = revision

    def _give_back_later(self, key: str, revision: int) -> None:
        """Free a place a take of ours got although its reply never came; no one holds it."""

        async def give_back() -> None:
            assert self._kv is not None
            try:
                await self._kv.update(key, b"", last=revision)
                self.ops.releases += 1
            except KeyWrongLastSequenceError:
                self.ops.release_conflicts += 1
            except Exception as exc:
                self._warn(f"giving back {key} failed ({type(exc).__name__})")

        task = asyncio.get_running_loop().create_task(give_back(), name=f"give-back-{key}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def close(self) -> None:
        """Release what is still held and stop watching; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        if self._renewer is not None:
            # Not cancelled: a renewal cut off in flight may land without this process
            # learning its revision, and the release below would then miss and leave the place
            # held for a ttl. The loop ends after at most one renewal (op_timeout_s).
            done, _ = await asyncio.wait({self._renewer}, timeout=self.settings.op_timeout_s * 2)
            if not done:
                self._renewer.cancel()
        for lease in list(self._held.values()):
            with contextlib.suppress(Exception):
                await self.release(lease)
        for task in list(self._background):
            with contextlib.suppress(Exception):
                await asyncio.wait({task}, timeout=self.settings.op_timeout_s * 2)
        for view in self._views.values():
            if view.watcher is not None:
                with contextlib.suppress(Exception):
                    await view.watcher.stop()
            if view.watch_task is not None:
                view.watch_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await view.watch_task

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
        return sum(1 for lease in self._held.values() if lease.slot == slot)

    def places(self, slot: str) -> list[dict[str, Any]]:
        """Each place as a row (key, revision, holder, request, stale) for people and tests."""
        return self._views[slot].rows(time.monotonic(), self.ttl)

    @property
    def ttl(self) -> float:
        return self.settings.ttl_s

    # -- taking a place -----------------------------------------------------------------------

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
        ``on_lost`` is called if the lease is lost while held (see the module doc).
        """
        if self._kv is None:
            raise LeaseError("the slot lease limiter was used before start()")
        view = self._views[slot]
        while True:
            if give_up() or self._closed:
                return None
            if self.nc.is_closed:
                raise LeaseError(
                    "the connection to NATS closed, so slot leases can no longer be taken; "
                    "check that NATS is running"
                )
            now = time.monotonic()
            place = view.candidate(now, self.ttl, self._held)
            if place is not None:
                lease = await self._try_take(view, place, request, on_lost)
                if lease is not None:
                    return lease
                continue
            if now - view.last_update >= self.settings.resync_s:
                await self._resync(view)
                continue
            await self._sleep(view, now, wake)

    async def _sleep(
        self, view: _SlotView, now: float, wake: Callable[[], Awaitable[Any]] | None
    ) -> None:
        deadline = min(
            t
            for t in (
                now + self.settings.max_wait_s,
                view.last_update + self.settings.resync_s,
                view.next_change_at(now, self.ttl, self._held),
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
        view: _SlotView,
        place: Place,
        request: str | None,
        on_lost: Callable[[], None] | None,
    ) -> Lease | None:
        assert self._kv is not None
        view.trying.add(place.key)
        seen = place.revision
        stealing = place.value is not None
        lease_id = secrets.token_hex(6)
        sent = time.monotonic()
        value = self._value(lease_id, request, time.time())
        try:
            revision = await self._kv.update(place.key, value.encode(), last=seen)
        except KeyWrongLastSequenceError:
            self.ops.take_conflicts += 1
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
            self._warn(f"taking a lease on {place.key} failed: {type(exc).__name__}")
            await asyncio.sleep(self.settings.error_pause_s * random.uniform(0.5, 1.5))
            return None
        finally:
            view.trying.discard(place.key)
        self.ops.takes += 1
        if stealing:
            self.ops.steals += 1
            log.info("took over %s from %s (stale for %.1fs)", place.key, place.value, self.ttl)
        lease = Lease(
            slot=view.slot,
            key=place.key,
            index=place.index,
            lease_id=lease_id,
            revision=revision,
            request=request,
            taken_at=sent,
            valid_until=sent + self.ttl,
            on_lost=on_lost,
        )
        self._held[place.key] = lease
        view.apply(place.key, revision, value)
        return lease

    def _value(self, lease_id: str, request: str | None, taken_at: float) -> LeaseValue:
        now = time.time()
        return LeaseValue(
            holder=self.holder,
            lease_id=lease_id,
            request=request[:200] if request else None,
            taken_at=taken_at,
            renewed_at=now,
            expires_at=now + self.ttl,
        )

    async def refresh(self) -> None:
        """Read every place of every slot directly, for a reader that never waits for a place
        (a waiter resyncs by itself when its watch has been silent for ``resync_s``)."""
        for view in self._views.values():
            await self._resync(view)

    async def _resync(self, view: _SlotView) -> None:
        """Read every place directly: the watch has been silent longer than ``resync_s``."""
        assert self._kv is not None
        view.last_update = time.monotonic()
        # A direct read is the truth: places that failed may be worth trying again.
        view.failed_at.clear()
        for p in view.places:
            self.ops.reads += 1
            try:
                entry = await self._kv.get(p.key)
            except KeyNotFoundError as exc:
                # Deleted or purged: free, at the revision of the marker if there is one.
                entry_rev = getattr(getattr(exc, "entry", None), "revision", None)
                if entry_rev:
                    view.apply(p.key, entry_rev, None)
                continue
            except Exception as exc:
                self._warn(f"reading lease {p.key} failed: {type(exc).__name__}")
                return
            value = LeaseValue.decode(entry.value or b"")
            if view.apply(p.key, entry.revision, value):
                self._check_ours(view, p.key, entry.revision, value)

    # -- holding and giving back --------------------------------------------------------------

    async def release(self, lease: Lease, *, handoff_s: float = 0.0) -> None:
        """Free the place if it is still ours; never raises (a lost release expires by itself).

        ``handoff_s`` > 0: the caller still has work but held the place for long enough; other
        workers get that long to take it before a waiter of this process may.
        """
        assert self._kv is not None
        if handoff_s > 0:
            self._views[lease.slot].yield_until[lease.key] = time.monotonic() + handoff_s
        async with lease.lock:
            if lease.released:
                return
            lease.released = True
            self._held.pop(lease.key, None)
            if lease.lost:
                return
            try:
                revision = await self._update_ours(lease, b"")
            except KeyWrongLastSequenceError:
                self.ops.release_conflicts += 1
                return
            except Exception as exc:
                self._warn(
                    f"releasing lease {lease.key} failed ({type(exc).__name__}); it returns "
                    f"by itself within {self.ttl:.0f}s"
                )
                return
            self.ops.releases += 1
            self._views[lease.slot].apply(lease.key, revision, None)

    async def _update_ours(self, lease: Lease, value: bytes) -> int:
        """Compare-and-set ``lease.key`` against the lease's revision. If that misses, the key
        may still hold this very lease at a newer revision (a renewal of ours landed but its
        reply was lost and the watch has not shown it yet): then once more at that revision.
        Raises ``KeyWrongLastSequenceError`` when the place is someone else's."""
        assert self._kv is not None
        try:
            return await self._kv.update(lease.key, value, last=lease.revision)
        except KeyWrongLastSequenceError:
            self.ops.reads += 1
            try:
                entry = await self._kv.get(lease.key)
            except Exception:
                entry = None
            current = LeaseValue.decode(entry.value or b"") if entry is not None else None
            if entry is None or current is None or current.lease_id != lease.lease_id:
                raise
            if entry.revision <= lease.revision:
                raise
            lease.revision = entry.revision
            return await self._kv.update(lease.key, value, last=lease.revision)

    def _warn(self, message: str) -> None:
        """Count a failed KV operation; log at most one line per 10 s (a leader election
        fails every operation for a few seconds)."""
        self.ops.errors += 1
        now = time.monotonic()
        if now - self._last_warning >= 10.0:
            self._last_warning = now
            log.warning("%s (%d KV errors so far)", message, self.ops.errors)

    def _lose(self, lease: Lease, why: str) -> None:
        if lease.lost or lease.released:
            return
        lease.lost = True
        self.ops.lost += 1
        self._held.pop(lease.key, None)
        log.warning("lost slot lease %s: %s", lease.key, why)
        if lease.on_lost is not None:
            lease.on_lost()

    async def _renew_loop(self) -> None:
        # Ends when close() sets _closed, never by cancel(): on Python 3.11 a cancel that
        # arrives in the same loop turn as a KV reply is swallowed by the asyncio.wait_for
        # inside nats-py's request (CPython gh-86296, fixed in 3.12), and the loop that relied
        # on it went on renewing, forever, the leases close() was waiting to give back (15 of
        # 100 closes during renewals hung).
        while not self._closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.settings.renew_interval_s)
            for lease in list(self._held.values()):
                if self._closed:
                    return
                await self._renew(lease)

    async def _renew(self, lease: Lease) -> None:
        assert self._kv is not None
        async with lease.lock:
            if lease.released or lease.lost:
                return
            sent = time.monotonic()
            if sent >= lease.valid_until:
                self._lose(lease, f"no renewal succeeded for {self.ttl:.0f}s")
                return
            value = self._value(lease.lease_id, lease.request, time.time())
            try:
                revision = await self._update_ours(lease, value.encode())
            except KeyWrongLastSequenceError:
                self.ops.renewals += 1
                self._lose(lease, "the place was taken over (this worker missed its renewals)")
                return
            except Exception as exc:
                self._warn(f"renewing lease {lease.key} failed: {type(exc).__name__}")
                return
            self.ops.renewals += 1
            lease.revision = revision
            lease.valid_until = sent + self.ttl
            self._views[lease.slot].apply(lease.key, revision, value)


__all__ = [
    "DEFAULT_BUCKET",
    "Lease",
    "LeaseError",
    "LeaseOps",
    "LeaseSettings",
    "LeaseValue",
    "NatsLeaseLimiter",
    "Place",
    "holder_id",
    "place_key",
]
