"""One batch: its routes, queue, books and progress, and the workers that run it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Sequence

from model_foundry.lib.slots.client import SlotClient
from model_foundry.lib.slots.config import Slot, SlotFile
from model_foundry.lib.slots.dispatcher.ledger import Ledger
from model_foundry.lib.slots.dispatcher.progress import Progress
from model_foundry.lib.slots.dispatcher.recorder import OnAttempt, Recorder
from model_foundry.lib.slots.dispatcher.results import DispatchResult
from model_foundry.lib.slots.dispatcher.routing import Router, WorkQueue, route_tiers
from model_foundry.lib.slots.dispatcher.tasks import DispatchOptions, Task
from model_foundry.lib.slots.dispatcher.worker import SlotWorker
from model_foundry.lib.slots.limiter import (
    Limiter,
    LimiterChoice,
    default_lock_dir,
    open_limiter,
)


class Batch:
    """``tasks`` on the live slots of ``profile``: built before anything is sent, then ``run``."""

    def __init__(
        self,
        tasks: list[Task],
        slot_file: SlotFile,
        profile: str | None,
        on_attempt: OnAttempt | None,
        options: DispatchOptions,
        roles: Iterable[str] = (),
    ) -> None:
        self.options = options
        self.slot_file = slot_file
        self.profile = slot_file.resolve_profile(profile)
        self.router = Router(route_tiers(tasks, slot_file, self.profile, roles))
        self.slots: dict[str, Slot] = {n: slot_file.slots[n] for n in self.router.slots()}
        self.queue = WorkQueue(families=options.families)
        # Server slots are named only for a batch with families: a batch without keeps the
        # server's own choice, which serves a repeated prompt by similarity too, and in
        # bench slots --workers 3 measured a few percent fuller than naming every slot.
        self.pins = options.families and any(t.family is not None for t in tasks)
        for t in tasks:
            self.queue.add(t)
        self.thinking = {
            role: slot_file.thinking_for_role(role) for role in {t.role for t in tasks} | set(roles)
        }
        self.keys = {t.key for t in tasks}
        self.progress = Progress(options.batch_timeout_s)
        self.recorder = Recorder(
            on_attempt,
            options.record_in_thread,
            self.progress,
            every_s=options.record_every_s,
            more_work=lambda: len(self.queue) > 0,
        )
        self.recorder.on_new = self.add
        self.ledger = Ledger(
            self.slots, options, self.router, self.queue, self.progress, self.recorder
        )

    def add(self, tasks: Sequence[Task]) -> None:
        """Tasks joining the running batch (a growing ``on_attempt``): the same queue, caps
        and places as the rest. Raises ``ValueError`` on a key the batch has had, or a role
        it was not started with."""
        for t in tasks:
            if t.key in self.keys:
                raise ValueError(f"duplicate task key {t.key!r}: keys must be unique in a batch")
            if t.role not in self.thinking:
                raise ValueError(f"role {t.role!r} was not named when the batch started")
        self.router.add_routes(route_tiers(list(tasks), self.slot_file, self.profile))
        for t in tasks:
            self.keys.add(t.key)
            self.queue.add(t)
        self.progress.notify()

    def finished(self) -> bool:
        if self.progress.stopping:
            return True
        idle = len(self.queue) == 0 and self.ledger.unsettled == 0
        # A growing batch may still get work from the attempts not yet recorded.
        return idle and not (self.recorder.grows and self.recorder.unrecorded)

    def no_work_for(self, slot: str) -> bool:
        """Stop waiting for a token: the batch is over or other workers took the work."""
        self.progress.check_deadline()
        now = time.monotonic()
        return self.finished() or self.queue.peek(self.router.roles_for(slot, now), now) is None

    async def wait_for_change(self, slot: str, changed: asyncio.Event | None = None) -> None:
        """Until the batch changes (``changed``: the event as it was before the caller last
        awaited something, so a change meanwhile is not missed) or a timer is due."""
        now = time.monotonic()
        timers = (
            self.queue.next_ready(self.router.roles_of_slot.get(slot, [])),
            self.router.next_change(now),
        )
        await self.progress.wait(now, timers, changed)

    def limiter_choice(self) -> LimiterChoice:
        o = self.options
        return LimiterChoice(
            kind=o.slot_limiter,
            nats=o.nats,
            lease=o.lease,
            lock_dir=o.lock_dir or default_lock_dir(),
            poll_s=o.token_poll_s,
        )

    async def run(self) -> DispatchResult:
        started = time.monotonic()
        parallel = {n: s.parallel for n, s in self.slots.items()}
        async with open_limiter(self.limiter_choice(), parallel) as (limiter, fallback):
            await self._run_workers(limiter)
            report = limiter.report()
        if fallback:
            report["fallback"] = fallback
        ledger = self.ledger
        requests = len(ledger.attempts)
        report["requests"] = requests
        if "kv_ops" in report and requests:
            report["kv_ops_per_request"] = round(report["kv_ops"]["total"] / requests, 3)
        if self.recorder.error is not None:
            raise self.recorder.error
        undone = self.queue.drain_keys()
        return DispatchResult(
            attempts=ledger.attempts,
            final=ledger.final,
            undone=undone,
            slots=ledger.summaries,
            seconds=time.monotonic() - started,
            stopped_early=self.progress.stopping,
            stop_reason=self.progress.stop_reason,
            limiter=report,
        )

    async def _run_workers(self, limiter: Limiter) -> None:
        clients = {
            n: SlotClient(s, request_timeout_s=self.options.request_timeout_s)
            for n, s in self.slots.items()
        }
        recorder = asyncio.create_task(self.recorder.run())
        try:
            workers = [
                asyncio.create_task(
                    SlotWorker(self, s, clients[n], limiter).run(), name=f"slot-{n}-{i}"
                )
                for n, s in self.slots.items()
                for i in range(s.parallel)
            ]
            try:
                await asyncio.gather(*workers)
            except BaseException as exc:
                # Stop first: a worker whose cancel is swallowed (Python 3.11's wait_for inside
                # a NATS request, CPython gh-86296) then ends at its next turn instead of
                # working through the rest of the batch.
                self.progress.stop(f"interrupted: {type(exc).__name__}")
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
        finally:
            self.recorder.close()
            with contextlib.suppress(Exception):
                await recorder
            for c in clients.values():
                with contextlib.suppress(Exception):
                    await c.aclose()


__all__ = ["Batch"]
