"""The lease bucket: its settings, the count of every operation on it, and opening it."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

log = logging.getLogger(__name__)

DEFAULT_BUCKET = "model_foundry_slot_leases"


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


class LeaseBucket:
    """The KV bucket every place lives in, as this process uses it: opened once, every
    operation counted in ``ops``, failures logged sparingly."""

    def __init__(self, settings: LeaseSettings, ops: LeaseOps) -> None:
        self.settings = settings
        self.ops = ops
        self._kv: KeyValue | None = None
        self._last_warning = -1e9

    @property
    def opened(self) -> bool:
        return self._kv is not None

    @property
    def kv(self) -> KeyValue:
        assert self._kv is not None, "the lease bucket was used before open()"
        return self._kv

    @kv.setter
    def kv(self, kv: KeyValue) -> None:
        self._kv = kv

    async def open(self, js: JetStreamContext) -> None:
        self._kv = await self._bucket(js)

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

    def warn(self, message: str) -> None:
        """Count a failed KV operation; log at most one line per 10 s (a leader election
        fails every operation for a few seconds)."""
        self.ops.errors += 1
        now = time.monotonic()
        if now - self._last_warning >= 10.0:
            self._last_warning = now
            log.warning("%s (%d KV errors so far)", message, self.ops.errors)


__all__ = ["DEFAULT_BUCKET", "LeaseBucket", "LeaseError", "LeaseOps", "LeaseSettings"]
