"""A slot's worker: takes the oldest task its slot may serve and sends it on a held place."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Protocol

from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.client import SlotClient
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.dispatcher.ledger import Ledger
from model_foundry.lib.slots.dispatcher.place import HeldPlace
from model_foundry.lib.slots.dispatcher.progress import Progress
from model_foundry.lib.slots.dispatcher.routing import Pending, Router, WorkQueue
from model_foundry.lib.slots.dispatcher.tasks import DispatchOptions
from model_foundry.lib.slots.leases import LeaseError
from model_foundry.lib.slots.limiter import Limiter


class WorkSource(Protocol):
    """What a worker needs of its batch (``batch.Batch``): its queue, routing, ledger and
    progress. A protocol, so the batch that creates workers and the workers it creates do not
    import each other."""

    options: DispatchOptions
    progress: Progress
    queue: WorkQueue
    router: Router
    ledger: Ledger
    thinking: Mapping[str, bool | None]
    # Whether requests name their place's server slot (``Batch.pins``).
    pins: bool

    def finished(self) -> bool: ...

    def no_work_for(self, slot: str) -> bool: ...

    async def wait_for_change(self, slot: str, changed: asyncio.Event | None = None) -> None: ...


class SlotWorker:
    """One of the ``parallel`` workers of ``slot``; it pulls until the batch is finished."""

    def __init__(self, batch: WorkSource, slot: Slot, client: SlotClient, limiter: Limiter) -> None:
        self.batch = batch
        self.slot = slot
        self.client = client
        self.place = HeldPlace(limiter, slot.name, batch.options)

    async def run(self) -> None:
        try:
            await self._work()
        finally:
            await self.place.release()

    async def _work(self) -> None:
        batch, place, name = self.batch, self.place, self.slot.name
        progress, queue, router = batch.progress, batch.queue, batch.router
        while True:
            progress.check_deadline()
            if batch.finished():
                return
            now = time.monotonic()
            roles = router.roles_for(name, now)
            if queue.peek(roles, now) is None:
                # Nothing for this slot now: its place goes back for other workers to use.
                # The event is taken before the release awaits NATS: a task settling meanwhile
                # (often the batch's last) must wake this worker, not leave it asleep for the
                # bounded second.
                changed = progress.changed
                await place.release()
                await batch.wait_for_change(name, changed)
                continue
            try:
                got = await place.take(lambda: batch.no_work_for(name), self._wait_changed)
            except LeaseError as exc:
                progress.stop(f"slot limiter failed: {exc}")
                return
            if not got:
                continue
            now = time.monotonic()
            index = place.index
            item = queue.take(
                router.roles_for(name, now), now, None if index is None else (name, index)
            )
            if item is None:
                continue
            siblings, extra = await self._join_samples(item)
            members = [item, *siblings]
            with batch.ledger.request_on(name, len(members)):
                thinking = batch.thinking.get(item.task.role)
                attempts = await send(self.client, members, place.lost, thinking, self._pin(index))
            await place.release_extra(extra)
            await place.after_request()
            for member, attempt in zip(members, attempts, strict=True):
                batch.ledger.settle(name, member, attempt)

    async def _join_samples(self, item: Pending) -> tuple[list[Pending], list[Any]]:
        """The samples to send with ``item`` as one request with ``n`` choices, and the extra
        places they hold: as many of its waiting sample siblings as the slot takes at once
        (``Slot.samples_per_request``) and as have a place free right now. Never waits for a
        place: waiting for k free places would leave the slot part idle, so k is split."""
        queue, most = self.batch.queue, self.slot.samples_per_request - 1
        wanted = len(queue.siblings(item, most))
        if wanted == 0:
            return [], []
        extra = await self.place.take_free(wanted)
        siblings = queue.siblings(item, len(extra), take=True)
        spare = extra[len(siblings) :]
        if spare:
            await self.place.release_extra(spare)
        return siblings, extra[: len(siblings)]

    def _pin(self, index: int | None) -> dict[str, int]:
        """The server slot a request runs in: its place's, on a runtime with fixed server
        slots, in a batch with families. Every request of such a batch is pinned, never only
        some: a place's server slot is then always free when its holder sends (the limiter
        gives each place to one request at a time), and holds what that place ran last."""
        field = self.slot.server.slot_pin
        if not self.batch.pins or field is None or index is None:
            return {}
        return {field: index}

    def _wait_changed(self) -> Awaitable[bool]:
        return self.batch.progress.changed.wait()


async def send(
    client: SlotClient,
    items: Sequence[Pending],
    lost: asyncio.Event,
    thinking: bool | None,
    pin: Mapping[str, int] | None = None,
) -> list[Attempt]:
    """One request for ``items`` (one, or the samples of one prompt as ``n`` choices, their
    seeds counting up from the first's; sent as fitting rendered the first, where it did);
    cancelled (and retried later) if a place's lease is lost meanwhile. ``pin``
    (``SlotWorker._pin``) goes with the request, outside its key."""
    first = items[0].task
    rendered = first.rendered.get(client.slot.name)
    request = asyncio.ensure_future(
        client.run_choices(
            keys=[i.task.key for i in items],
            task=first.task,
            role=first.role,
            body=first.body,
            params={**first.params, **pin} if pin else first.params,
            thinking=thinking,
            attempt=items[0].attempt,
            rendered=rendered.pinned(pin) if rendered is not None else None,
        )
    )
    watch = asyncio.ensure_future(lost.wait())
    try:
        await asyncio.wait({request, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not request.done():
            # Lost lease, or this worker is being cancelled: closing the connection makes
            # the server drop the request, so the place is really free for its new holder.
            request.cancel()
            await asyncio.gather(request, return_exceptions=True)
    if not request.cancelled():
        return request.result()
    return [_lease_lost(client, item) for item in items]


def _lease_lost(client: SlotClient, item: Pending) -> Attempt:
    slot = client.slot
    return Attempt(
        key=item.task.key,
        task=item.task.task,
        role=item.task.role,
        slot=slot.name,
        model=slot.model,
        runtime=slot.runtime,
        status="error",
        attempt=item.attempt,
        error_class="SlotLeaseLost",
        error=(
            "this worker's lease on the slot was taken over (it missed its renewals), so "
            "the request was cancelled to keep the slot within its parallel limit"
        ),
        retryable=True,
    )


__all__ = ["SlotWorker", "send"]
