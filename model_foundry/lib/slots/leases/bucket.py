"""The lease bucket: its settings, the count of every operation on it, and opening it."""

from __future__ import annotations

import logging
import time

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

from model_foundry.lib.slots.leases.settings import (
    DEFAULT_BUCKET,
    LeaseError,
    LeaseOps,
    LeaseSettings,
)

log = logging.getLogger(__name__)


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
