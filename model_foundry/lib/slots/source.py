"""Where a run finds its slots, in plain code: the slot file, the profile, and how slot limits
are shared.

The assets' ``SlotsResource`` hands Dagster these same fields; the commands that run a
collection or a recipe without Dagster (``dataset collect``, ``recipe run``) build them from
the environment with :func:`slot_source_from_env`, so their first request leaves before any
of Dagster loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from model_foundry.lib import settings
from model_foundry.lib.slots.config import SlotFile, load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions
from model_foundry.lib.slots.leases.settings import LeaseSettings

if TYPE_CHECKING:
    from model_foundry.lib.nats.connection import NatsClient


@dataclass(frozen=True)
class SlotSource:
    """A run's slots: ``load`` reads the slot file (a bad one raises ``SlotFileError``, its
    one sentence), ``nats`` shares each slot's places as leases when set."""

    slot_file: str
    profile: str | None = None
    request_timeout_s: float | None = None
    limiter: str = "auto"
    lease_ttl_s: float = 30.0
    lease_replicas: int = 1
    nats: NatsClient | None = None

    def load(self) -> SlotFile:
        return load_slot_file(self.slot_file)

    def context_book(self, slot_file: SlotFile) -> ContextBook:
        """Context windows and token counts of the profile's live slots (asked lazily)."""
        return ContextBook(slot_file.live_slots(self.profile))

    def dispatch_options(self) -> DispatchOptions:
        return DispatchOptions(
            request_timeout_s=self.request_timeout_s,
            slot_limiter=self.limiter,  # type: ignore[arg-type]
            nats=self.nats,
            lease=LeaseSettings(ttl_s=self.lease_ttl_s, replicas=self.lease_replicas),
        )


def slot_source_from_env() -> SlotSource:
    """The slots as the environment names them, as the code location wires them: NATS
    leases only when ``NATS_URL`` is set (or ``MODEL_FOUNDRY_SLOT_LIMITER=nats``), so a bare
    checkout never touches a stranger's server on the default port."""
    nats = None
    if settings.slot_leases_wanted():
        # Only then: the NATS client library is no part of a run without leases.
        from model_foundry.lib.nats.connection import nats_client_from_env

        nats = nats_client_from_env()
    return SlotSource(
        slot_file=str(settings.slot_file_path()),
        limiter=settings.slot_limiter(),
        lease_ttl_s=settings.slot_lease_ttl_s(),
        lease_replicas=settings.nats_replicas(),
        nats=nats,
    )


__all__ = ["SlotSource", "slot_source_from_env"]
