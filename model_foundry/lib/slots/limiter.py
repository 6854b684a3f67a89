"""The in-flight limit of every slot, across runs and processes: NATS leases or flock files.

Two limiters keep the promise "a slot never has more than ``parallel`` requests in flight":

- ``nats``: :class:`~model_foundry.lib.slots.leases.NatsLeaseLimiter`, places in a NATS
  key-value bucket that every worker on every machine shares. Used wherever the pipeline's
  NATS is configured (``NATS_URL``, always set under ``make up``) and reachable.
- ``flock``: :class:`FlockLimiter`, ``parallel`` lock files per slot in a local folder; the
  kernel frees a dead process's files. It only covers one machine, so it is the fallback for
  commands run without NATS.

Both offer the same small interface (:class:`Limiter`), which the dispatcher uses for every
request and the metrics exporter reads (``in_flight`` against ``parallel``).
:func:`open_limiter` picks one from :class:`LimiterChoice`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import random
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from model_foundry.lib import settings
from model_foundry.lib.slots.leases.settings import LeaseSettings

if TYPE_CHECKING:
    from model_foundry.lib.nats.connection import NatsClient
    from model_foundry.lib.slots.leases.limiter import NatsLeaseLimiter

log = logging.getLogger(__name__)

LimiterKind = Literal["auto", "nats", "flock"]


class Limiter(Protocol):
    """What the dispatcher and the metrics exporter need from a slot limiter."""

    kind: str

    async def acquire(
        self,
        slot: str,
        give_up: Callable[[], bool],
        *,
        request: str | None = None,
        on_lost: Callable[[], None] | None = None,
        wake: Callable[[], Awaitable[Any]] | None = None,
    ) -> Any | None: ...

    async def release(self, held: Any, *, handoff_s: float = 0.0) -> None: ...

    def still_valid(self, held: Any) -> bool: ...

    def in_flight(self, slot: str) -> int: ...

    def parallel(self, slot: str) -> int: ...

    def report(self) -> dict[str, Any]: ...

    async def close(self) -> None: ...


def default_lock_dir() -> Path:
    return settings.data_dir() / "slot_locks"


# ---------------------------------------------------------------------------------------------
# flock: one machine.


class SlotLimiter:
    """``parallel`` flock-ed token files for one slot, shared by every process on this machine."""

    def __init__(self, slot: str, parallel: int, lock_dir: Path | None = None) -> None:
        self.slot = slot
        self.parallel = parallel
        self.dir = (lock_dir or default_lock_dir()) / slot
        self.dir.mkdir(parents=True, exist_ok=True)
        self._fds: dict[int, int] = {}
        # flock is per open file: this process must not "re-take" a token it already holds.
        self._held: set[int] = set()

    def _fd(self, i: int) -> int:
        if i not in self._fds:
            self._fds[i] = os.open(self.dir / f"{i}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        return self._fds[i]

    def try_acquire(self) -> int | None:
        for i in range(self.parallel):
            if i in self._held:
                continue
            try:
                fcntl.flock(self._fd(i), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            self._held.add(i)
            return i
        return None

    async def acquire(self, give_up: Callable[[], bool], poll_s: float = 0.02) -> int | None:
        """A token, or None as soon as ``give_up()`` says it is no longer needed."""
        while True:
            token = self.try_acquire()
            if token is not None:
                return token
            if give_up():
                return None
            await asyncio.sleep(poll_s * random.uniform(0.5, 1.5))

    def release(self, token: int) -> None:
        if token in self._held:
            fcntl.flock(self._fds[token], fcntl.LOCK_UN)
            self._held.discard(token)

    def in_flight(self) -> int:
        """Token files locked by any process on this machine, read from ``/proc/locks``.

        Only reads: taking a token to test it would make a worker that tries at that instant
        miss a free place. Without ``/proc/locks`` (not Linux) it says 0.
        """
        inodes = set()
        for i in range(self.parallel):
            with contextlib.suppress(OSError):
                inodes.add((self.dir / f"{i}.lock").stat().st_ino)
        return len(inodes & _flocked_inodes())

    def close(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()
        self._held.clear()


def _flocked_inodes() -> set[int]:
    """Inodes with a FLOCK lock on this machine (``/proc/locks``: ``N: FLOCK ... MAJ:MIN:INODE``).

    Lines of waiters (``N: -> FLOCK ...``) do not hold the lock and have ``->`` in field 2.
    """
    found: set[int] = set()
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5].count(":") == 2:
            with contextlib.suppress(ValueError):
                found.add(int(parts[5].rsplit(":", 1)[1]))
    return found


@dataclass
class FlockToken:
    slot: str
    token: int

    @property
    def index(self) -> int:
        """Which of the slot's places this is (a lease's ``index`` says the same)."""
        return self.token


class FlockLimiter:
    """:class:`SlotLimiter` per slot behind the :class:`Limiter` interface."""

    kind = "flock"

    def __init__(
        self, slots: Mapping[str, int], lock_dir: Path | None = None, poll_s: float = 0.02
    ) -> None:
        self.lock_dir = lock_dir or default_lock_dir()
        self.poll_s = poll_s
        self._slots = {n: SlotLimiter(n, p, self.lock_dir) for n, p in slots.items()}
        self.takes = 0

    async def acquire(
        self,
        slot: str,
        give_up: Callable[[], bool],
        *,
        request: str | None = None,
        on_lost: Callable[[], None] | None = None,
        wake: Callable[[], Awaitable[Any]] | None = None,
    ) -> FlockToken | None:
        # A lock file is never lost while its process lives, so on_lost is never called.
        token = await self._slots[slot].acquire(give_up, self.poll_s)
        if token is None:
            return None
        self.takes += 1
        return FlockToken(slot, token)

    async def release(self, held: FlockToken, *, handoff_s: float = 0.0) -> None:
        # No hand-off between processes here: a waiter polls and takes whatever is free.
        self._slots[held.slot].release(held.token)

    def still_valid(self, held: FlockToken) -> bool:
        return True  # a lock file stays ours while this process lives

    def in_flight(self, slot: str) -> int:
        return self._slots[slot].in_flight()

    def parallel(self, slot: str) -> int:
        return self._slots[slot].parallel

    def report(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": str(self.lock_dir), "takes": self.takes}

    async def close(self) -> None:
        for lim in self._slots.values():
            lim.close()


class LeaseSlotPlaces:
    """In-flight per slot as every worker's leases show it, for a synchronous reader.

    The metrics exporter reads from threads of its own; this keeps a watching (never taking)
    :class:`NatsLeaseLimiter` up to date on an event loop in a background thread.
    """

    def __init__(self, limiter: NatsLeaseLimiter, loop: asyncio.AbstractEventLoop) -> None:
        self._limiter = limiter
        self._loop = loop

    @classmethod
    def open(
        cls, nats: NatsClient, slots: Mapping[str, int], lease: LeaseSettings | None = None
    ) -> LeaseSlotPlaces:
        """Connect and watch; raises ``NatsUnavailableError`` when NATS cannot be reached."""
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="slot-lease-watch", daemon=True).start()

        from model_foundry.lib.slots.leases.limiter import NatsLeaseLimiter

        async def start() -> NatsLeaseLimiter:
            nc = await nats.connect()
            return await NatsLeaseLimiter(nc, slots, lease, where=nats.redacted_servers).start()

        try:
            limiter = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=60)
        except BaseException:
            loop.call_soon_threadsafe(loop.stop)
            raise
        return cls(limiter, loop)

    def in_flight(self, slot: str) -> int:
        return self._limiter.in_flight(slot)

    def parallel(self, slot: str) -> int:
        return self._limiter.parallel(slot)

    def close(self) -> None:
        async def stop() -> None:
            await self._limiter.close()
            await self._limiter.nc.close()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)


# ---------------------------------------------------------------------------------------------
# Choosing one.


@dataclass
class LimiterChoice:
    """Which limiter a batch uses: ``nats`` when ``nats`` is given and reachable (``auto``)."""

    kind: LimiterKind = "auto"
    nats: NatsClient | None = None
    lease: LeaseSettings = field(default_factory=LeaseSettings)
    lock_dir: Path | None = None
    poll_s: float = 0.02


class SlotLimiterUnavailableError(RuntimeError):
    """``nats`` was asked for explicitly and NATS cannot be reached; one sentence."""


@contextlib.asynccontextmanager
async def open_limiter(
    choice: LimiterChoice, slots: Mapping[str, int]
) -> AsyncIterator[tuple[Limiter, str | None]]:
    """The limiter for ``slots`` (name -> parallel), and why it fell back to flock, if it did.

    Everything it opened (the NATS connection, lock files) is closed on exit; leases still
    held are released.
    """
    fallback: str | None = None
    if choice.kind != "flock" and choice.nats is not None:
        from model_foundry.lib.nats.connection import NatsUnavailableError

        try:
            nc = await choice.nats.connect()
        except NatsUnavailableError as exc:
            if choice.kind == "nats":
                raise SlotLimiterUnavailableError(
                    f"slot leases need NATS: {exc} (or set MODEL_FOUNDRY_SLOT_LIMITER=flock "
                    "on a single machine)"
                ) from None
            fallback = f"NATS unreachable, flock on this machine only: {exc}"
        else:
            from model_foundry.lib.slots.leases.limiter import NatsLeaseLimiter

            try:
                lim = NatsLeaseLimiter(nc, slots, choice.lease, where=choice.nats.redacted_servers)
                await lim.start()
                try:
                    yield lim, None
                finally:
                    await lim.close()
            finally:
                with contextlib.suppress(Exception):
                    await nc.close()
            return
    elif choice.kind == "nats":
        raise SlotLimiterUnavailableError(
            "MODEL_FOUNDRY_SLOT_LIMITER=nats but no NATS servers are configured; set NATS_URL"
        )
    if fallback:
        log.warning("slot limiter: %s", fallback)
    flock = FlockLimiter(slots, choice.lock_dir, choice.poll_s)
    try:
        yield flock, fallback
    finally:
        await flock.close()


__all__ = [
    "FlockLimiter",
    "FlockToken",
    "LeaseSlotPlaces",
    "Limiter",
    "LimiterChoice",
    "LimiterKind",
    "SlotLimiter",
    "SlotLimiterUnavailableError",
    "default_lock_dir",
    "open_limiter",
]
