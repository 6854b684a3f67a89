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

Where each part lives: ``places`` (keys and their JSON values), ``bucket`` (settings, the
operation count, opening the bucket), ``watch`` (the local view each watch keeps), ``take``
(waiting and the compare-and-set that takes a place), ``held`` (release, and reacting to what
the watch shows of this process's own writes), ``renewer`` (the renewal loop) and ``limiter``
(:class:`NatsLeaseLimiter`, which puts them together).

Behaviour relied on (nats-py 2.x ``nats/js/kv.py``): ``KeyValue.update`` raises
``KeyWrongLastSequenceError`` on a failed check; ``update(..., last=0)`` succeeds only if the
key has no message; watch entries carry the stream revision and ``operation`` DEL/PURGE.
"""

from typing import TYPE_CHECKING, Any

from model_foundry.lib.slots.leases.places import Lease, LeaseValue, Place, holder_id, place_key
from model_foundry.lib.slots.leases.settings import (
    DEFAULT_BUCKET,
    LeaseError,
    LeaseOps,
    LeaseSettings,
)

if TYPE_CHECKING:
    from model_foundry.lib.slots.leases.limiter import NatsLeaseLimiter


def __getattr__(name: str) -> Any:
    # The limiter imports the NATS client (a fifth of a second): only a run that shares its
    # slots through NATS pays for it.
    if name == "NatsLeaseLimiter":
        from model_foundry.lib.slots.leases.limiter import NatsLeaseLimiter

        return NatsLeaseLimiter
    raise AttributeError(name)


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
