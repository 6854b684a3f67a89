"""What a lease limiter is set with and reports, without the NATS client: a run that shares
no slot through NATS imports none of it (``leases/__init__.py`` loads the rest on first use)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

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


__all__ = ["DEFAULT_BUCKET", "LeaseError", "LeaseOps", "LeaseSettings"]
