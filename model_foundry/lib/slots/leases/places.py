"""Places and what their keys hold: one key ``<slot>.<i>`` per place, a JSON lease as its value."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field


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
    # Monotonic: the holder's own last moment of certain ownership (see the package doc).
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


__all__ = ["Lease", "LeaseValue", "Place", "holder_id", "place_key"]
