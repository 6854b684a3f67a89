"""The slot dispatcher: runs a batch of tasks across the live slots, each slot exactly full.

How it keeps the promises in docs/design.md:

- Slots pull. Every live slot runs ``parallel`` workers; a free worker takes the oldest task it
  may serve, so a fast slot simply takes more and no slot idles while it has eligible work.
- The in-flight limit holds across processes and machines: before each request a worker takes
  one of the slot's ``parallel`` places from the batch's limiter (``limiter.py``): a lease in
  NATS key-value storage shared by every worker that reaches the pipeline's NATS, or a
  ``flock`` token file on this machine when there is no NATS. A dead worker's place comes back
  (the kernel drops its lock; its lease is taken over once it stops being renewed), and a
  request whose lease was lost is cancelled and retried, so a slot never overfills.
- Failures: every call has a timeout; network errors, timeouts, 5xx and 429 are retried with
  exponential backoff and jitter (the task goes back to the queue, so another slot may take
  it); a 400 becomes an error attempt at once; ``failures_before_cooldown`` consecutive
  failures put a slot in cooldown and its role's work moves to the next tier of slots; when
  the error share passes ``stop_error_share`` no new task starts and the rest is reported
  undone.
- ``on_attempt`` sees every finished attempt, one at a time, off the event loop, so the caller
  can write it to DuckDB in its own short transaction while other requests stream.

Routing decisions (``Router``) and backoff (``RetryPolicy``) are pure and tested on their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import inspect
import itertools
import random
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_foundry.lib.slots.client import Attempt, SlotClient
from model_foundry.lib.slots.config import NoSlotForRoleError, Slot, SlotFile, load_slot_file
from model_foundry.lib.slots.leases import LeaseError, LeaseSettings
from model_foundry.lib.slots.limiter import (
    Limiter,
    LimiterChoice,
    LimiterKind,
    default_lock_dir,
    open_limiter,
)

OnAttempt = Callable[[Attempt], Any] | Callable[[Attempt], Awaitable[Any]]


@dataclass
class Task:
    """One unit of work. ``key`` identifies it across runs (finished keys are not resent)."""

    key: str
    task: str
    role: str
    messages: list[dict[str, Any]] | None = None
    # Raw completions prompt, or a one-turn chat prompt when ``messages`` is None.
    prompt: str | None = None
    # The text to translate (translator slots).
    text: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    # The only slots this task may go to (those whose context window holds it); None: any
    # slot that serves its role.
    only_slots: tuple[str, ...] | None = None

    @property
    def route(self) -> str:
        """The queue this task waits in: its role, narrowed to ``only_slots`` when set."""
        if self.only_slots is None:
            return self.role
        return f"{self.role}@{','.join(sorted(self.only_slots))}"


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    # Share of the delay that is randomised, so retries from many workers do not align.
    jitter: float = 0.5

    def delay(self, failed_attempts: int, rng: random.Random | None = None) -> float:
        base = min(self.backoff_max_s, self.backoff_base_s * 2 ** max(failed_attempts - 1, 0))
        r = (rng or random).random()
        return base * (1 - self.jitter * r)


@dataclass(frozen=True)
class DispatchOptions:
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    failures_before_cooldown: int = 3
    cooldown_s: float = 30.0
    # Stop starting tasks once errors / attempts passes this, after a minimum sample.
    stop_error_share: float = 0.5
    min_attempts_before_stop: int = 10
    # Overrides every slot's ``timeouts.request_s`` when set.
    request_timeout_s: float | None = None
    # Where the per-slot token files live; default ``<data dir>/slot_locks``.
    lock_dir: Path | None = None
    token_poll_s: float = 0.02
    # The shared limit: NATS leases when ``nats`` (a NatsClient) is given and reachable
    # ("auto"), flock files otherwise; "nats" makes an unreachable NATS an error.
    slot_limiter: LimiterKind = "auto"
    nats: Any = None
    lease: LeaseSettings = field(default_factory=LeaseSettings)
    # A worker keeps its place across consecutive requests for up to this long, then hands it
    # back and leaves it to workers elsewhere for handoff_s (saves two NATS round trips per
    # request while staying fair to other runs).
    place_hold_s: float = 5.0
    handoff_s: float = 0.05
    # No new task starts after this many seconds; in-flight ones finish (they have timeouts).
    batch_timeout_s: float | None = None
    # Run a synchronous ``on_attempt`` in a worker thread so a slow database write never
    # stalls the streams of other requests.
    record_in_thread: bool = True


@dataclass
class SlotSummary:
    slot: str
    parallel: int
    attempts: int = 0
    ok: int = 0
    errors: int = 0
    max_in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    busy_s: float = 0.0
    cooldowns: int = 0

    @property
    def gen_tps(self) -> float | None:
        """Generated tokens per second of request time, summed over concurrent requests."""
        return self.completion_tokens / self.busy_s if self.busy_s > 0 else None


@dataclass
class DispatchResult:
    attempts: list[Attempt]
    final: dict[str, Attempt]
    undone: list[str]
    slots: dict[str, SlotSummary]
    seconds: float
    stopped_early: bool = False
    stop_reason: str | None = None
    # Which limiter kept the slots' limit (kind, where, KV operations), for run metadata.
    limiter: dict[str, Any] = field(default_factory=dict)

    @property
    def ok_count(self) -> int:
        return sum(1 for a in self.final.values() if a.ok)

    @property
    def error_count(self) -> int:
        return sum(1 for a in self.final.values() if not a.ok)

    def summary(self) -> dict[str, Any]:
        """Plain numbers for Dagster metadata and the CLI."""
        return {
            "tasks_ok": self.ok_count,
            "tasks_error": self.error_count,
            "tasks_undone": len(self.undone),
            "attempts": len(self.attempts),
            "seconds": round(self.seconds, 3),
            "stopped_early": self.stopped_early,
            "stop_reason": self.stop_reason,
            "limiter": self.limiter,
            "slots": {
                n: {
                    "parallel": s.parallel,
                    "attempts": s.attempts,
                    "ok": s.ok,
                    "errors": s.errors,
                    "max_in_flight": s.max_in_flight,
                    "cooldowns": s.cooldowns,
                    "completion_tokens": s.completion_tokens,
                    "gen_tps": round(s.gen_tps, 2) if s.gen_tps else None,
                }
                for n, s in self.slots.items()
            },
        }


# ---------------------------------------------------------------------------------------------
# Pure routing.


class Router:
    """Which slot may take work of which role right now, given cooldowns.

    ``tiers`` maps a role to its slots by preference (see ``SlotFile.role_tiers``). A role is
    served by the first tier that has a slot not cooling down; if every tier is cooling, its
    work waits for the earliest cooldown to end.
    """

    def __init__(self, tiers: dict[str, list[list[str]]]) -> None:
        self.tiers = tiers
        self.cooling_until: dict[str, float] = {}
        self.roles_of_slot: dict[str, list[str]] = {}
        for role, role_tiers in tiers.items():
            for tier in role_tiers:
                for slot in tier:
                    self.roles_of_slot.setdefault(slot, []).append(role)

    def slots(self) -> list[str]:
        return list(self.roles_of_slot)

    def cooling(self, slot: str, now: float) -> bool:
        return self.cooling_until.get(slot, 0.0) > now

    def cool_down(self, slot: str, until: float) -> None:
        self.cooling_until[slot] = until

    def active_tier(self, role: str, now: float) -> list[str]:
        for tier in self.tiers[role]:
            if any(not self.cooling(s, now) for s in tier):
                return tier
        return []

    def roles_for(self, slot: str, now: float) -> list[str]:
        """Roles whose work ``slot`` may take now."""
        if self.cooling(slot, now):
            return []
        return [r for r in self.roles_of_slot.get(slot, []) if slot in self.active_tier(r, now)]

    def next_change(self, now: float) -> float | None:
        ends = [t for t in self.cooling_until.values() if t > now]
        return min(ends) if ends else None


@dataclass(order=True)
class _Pending:
    ready_at: float
    seq: int
    task: Task = field(compare=False)
    attempt: int = field(default=1, compare=False)


class WorkQueue:
    """Pending tasks per role: fresh ones in order, retries by the time they may run again."""

    def __init__(self) -> None:
        self.fresh: dict[str, deque[_Pending]] = {}
        self.retry: dict[str, list[_Pending]] = {}
        self._seq = itertools.count()

    def add(self, task: Task) -> None:
        self.fresh.setdefault(task.route, deque()).append(_Pending(0.0, next(self._seq), task))

    def requeue(self, item: _Pending, ready_at: float) -> None:
        item.ready_at = ready_at
        heapq.heappush(self.retry.setdefault(item.task.route, []), item)

    def __len__(self) -> int:
        return sum(len(q) for q in self.fresh.values()) + sum(len(h) for h in self.retry.values())

    def _head(self, role: str, now: float) -> _Pending | None:
        best = None
        heap = self.retry.get(role)
        if heap and heap[0].ready_at <= now:
            best = heap[0]
        q = self.fresh.get(role)
        if q and (best is None or q[0].seq < best.seq):
            best = q[0]
        return best

    def peek(self, roles: Iterable[str], now: float) -> _Pending | None:
        heads = [h for r in roles if (h := self._head(r, now)) is not None]
        return min(heads, key=lambda p: p.seq) if heads else None

    def take(self, roles: Iterable[str], now: float) -> _Pending | None:
        item = self.peek(roles, now)
        if item is None:
            return None
        route = item.task.route
        q = self.fresh.get(route)
        if q and q[0] is item:
            q.popleft()
        else:
            heapq.heappop(self.retry[route])
        return item

    def next_ready(self, roles: Iterable[str]) -> float | None:
        times = [h[0].ready_at for r in roles if (h := self.retry.get(r))]
        return min(times) if times else None

    def drain_keys(self) -> list[str]:
        keys = [p.task.key for q in self.fresh.values() for p in q]
        keys += [p.task.key for h in self.retry.values() for p in h]
        self.fresh.clear()
        self.retry.clear()
        return keys


class _HeldPlace:
    """One worker's place on its slot, kept across consecutive requests for a while.

    Taking and giving back a place costs a round trip to NATS each; a worker with more work
    for its slot keeps its place for up to ``place_hold_s`` and then hands it back, giving
    workers in other processes ``handoff_s`` to take it before this process may again.
    """

    def __init__(self, limiter: Limiter, slot: str, options: DispatchOptions) -> None:
        self.limiter = limiter
        self.slot = slot
        self.options = options
        self.held: Any = None
        self.since = 0.0
        self.lost = asyncio.Event()

    async def take(self, give_up: Callable[[], bool], wake: Callable[[], Awaitable[Any]]) -> bool:
        if self.held is not None:
            if self.limiter.still_valid(self.held):
                return True
            # Renewals fell behind (a frozen process, a slow NATS): a waiter elsewhere may
            # take this place any moment, so no new request starts on it.
            await self.release()
        self.lost = asyncio.Event()
        self.held = await self.limiter.acquire(self.slot, give_up, on_lost=self.lost.set, wake=wake)
        self.since = time.monotonic()
        return self.held is not None

    async def after_request(self) -> None:
        if self.lost.is_set():
            # Taken over while held: nothing to give back (the limiter knows).
            await self.release()
        elif time.monotonic() - self.since >= self.options.place_hold_s:
            await self.release(handoff_s=self.options.handoff_s)

    async def release(self, handoff_s: float = 0.0) -> None:
        held, self.held = self.held, None
        if held is not None:
            await self.limiter.release(held, handoff_s=handoff_s)


# ---------------------------------------------------------------------------------------------
# The batch.


class _Batch:
    def __init__(
        self,
        tasks: list[Task],
        slot_file: SlotFile,
        profile: str | None,
        on_attempt: OnAttempt | None,
        options: DispatchOptions,
    ) -> None:
        self.options = options
        self.on_attempt = on_attempt
        self.slot_file = slot_file
        self.profile = slot_file.resolve_profile(profile)
        self.rng = random.Random()
        tiers: dict[str, list[list[str]]] = {}
        for role in sorted({t.role for t in tasks}):
            role_tiers = slot_file.role_tiers(role, self.profile)
            if not role_tiers:
                raise NoSlotForRoleError(
                    f"no live slot can serve role {role!r} in profile {self.profile!r} of "
                    f"{slot_file.source}; add a fallback under roles.{role}.fallbacks or choose "
                    "another profile"
                )
            tiers[role] = [[s.name for s in tier] for tier in role_tiers]
        # A task narrowed to some slots (context windows) waits in a queue of its own whose
        # tiers keep only those slots, so routing, cooldown and failover work unchanged.
        for t in tasks:
            if t.only_slots is not None and t.route not in tiers:
                allowed = set(t.only_slots)
                narrowed = [[s for s in tier if s in allowed] for tier in tiers[t.role]]
                narrowed = [tier for tier in narrowed if tier]
                if not narrowed:
                    raise NoSlotForRoleError(
                        f"task {t.key!r}: none of the slots {sorted(allowed)} serves role "
                        f"{t.role!r} in profile {self.profile!r} of {slot_file.source}"
                    )
                tiers[t.route] = narrowed
        self.router = Router(tiers)
        self.slots: dict[str, Slot] = {n: slot_file.slots[n] for n in self.router.slots()}
        self.queue = WorkQueue()
        for t in tasks:
            self.queue.add(t)
        self.thinking = {
            role: slot_file.thinking_for_role(role) for role in {t.role for t in tasks}
        }
        self.attempts: list[Attempt] = []
        self.final: dict[str, Attempt] = {}
        self.summaries = {n: SlotSummary(n, s.parallel) for n, s in self.slots.items()}
        self.in_flight = dict.fromkeys(self.slots, 0)
        self.consecutive_failures = dict.fromkeys(self.slots, 0)
        self.total_in_flight = 0
        self.errors = 0
        self.stopping = False
        self.stop_reason: str | None = None
        self.deadline = (
            time.monotonic() + options.batch_timeout_s if options.batch_timeout_s else None
        )
        self._changed = asyncio.Event()
        self._records: asyncio.Queue[Attempt | None] = asyncio.Queue()
        self.record_error: BaseException | None = None

    # -- state --------------------------------------------------------------------------------

    def notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def finished(self) -> bool:
        return self.stopping or (len(self.queue) == 0 and self.total_in_flight == 0)

    def stop(self, reason: str) -> None:
        if not self.stopping:
            self.stopping = True
            self.stop_reason = reason
            self.notify()

    def _check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.stop(f"batch timeout of {self.options.batch_timeout_s}s reached")

    def _no_work_for(self, slot: str) -> bool:
        """Stop waiting for a token: the batch is over or other workers took the work."""
        self._check_deadline()
        now = time.monotonic()
        return self.finished() or self.queue.peek(self.router.roles_for(slot, now), now) is None

    async def wait_for_change(self, slot: str, changed: asyncio.Event | None = None) -> None:
        """Until the batch changes (``changed``: the event as it was before the caller last
        awaited something, so a change meanwhile is not missed) or a timer is due."""
        now = time.monotonic()
        wakeups = [
            t
            for t in (
                self.queue.next_ready(self.router.roles_of_slot.get(slot, [])),
                self.router.next_change(now),
                self.deadline,
            )
            if t is not None
        ]
        # Bounded so that a missed notification can only cost a moment, never a hang.
        timeout = min([1.0, *[max(t - now, 0.0) + 0.001 for t in wakeups]])
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for((changed or self._changed).wait(), timeout)

    # -- workers ------------------------------------------------------------------------------

    async def worker(self, slot: Slot, client: SlotClient, limiter: Limiter) -> None:
        place = _HeldPlace(limiter, slot.name, self.options)
        try:
            await self._work(slot, client, place)
        finally:
            await place.release()

    async def _work(self, slot: Slot, client: SlotClient, place: _HeldPlace) -> None:
        name = slot.name
        while True:
            self._check_deadline()
            if self.finished():
                return
            now = time.monotonic()
            roles = self.router.roles_for(name, now)
            if self.queue.peek(roles, now) is None:
                # Nothing for this slot now: its place goes back for other workers to use.
                # The event is taken before the release awaits NATS: a task settling meanwhile
                # (often the batch's last) must wake this worker, not leave it asleep for the
                # bounded second (measured: one worker in two ended 1 s late in bench slots
                # --workers 3).
                changed = self._changed
                await place.release()
                await self.wait_for_change(name, changed)
                continue
            try:
                got = await place.take(lambda: self._no_work_for(name), self._wait_changed)
            except LeaseError as exc:
                self.stop(f"slot limiter failed: {exc}")
                return
            if not got:
                continue
            now = time.monotonic()
            item = self.queue.take(self.router.roles_for(name, now), now)
            if item is None:
                continue
            self.in_flight[name] += 1
            self.total_in_flight += 1
            summary = self.summaries[name]
            summary.max_in_flight = max(summary.max_in_flight, self.in_flight[name])
            try:
                attempt = await self._send(client, item, place.lost)
            finally:
                self.in_flight[name] -= 1
                self.total_in_flight -= 1
            await place.after_request()
            self.settle(name, item, attempt)

    def _wait_changed(self) -> Awaitable[bool]:
        return self._changed.wait()

    async def _send(self, client: SlotClient, item: _Pending, lost: asyncio.Event) -> Attempt:
        """One request; cancelled (and retried later) if its slot lease is lost meanwhile."""
        request = asyncio.ensure_future(
            client.run(
                key=item.task.key,
                task=item.task.task,
                role=item.task.role,
                messages=item.task.messages,
                prompt=item.task.prompt,
                text=item.task.text,
                params=item.task.params,
                thinking=self.thinking.get(item.task.role),
                attempt=item.attempt,
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

    def settle(self, slot: str, item: _Pending, attempt: Attempt) -> None:
        """Book an attempt: retry, cool the slot down, stop the batch, or finish the task."""
        now = time.monotonic()
        s = self.summaries[slot]
        s.attempts += 1
        s.busy_s += attempt.latency_s or 0.0
        s.prompt_tokens += attempt.prompt_tokens or 0
        s.completion_tokens += attempt.completion_tokens or 0
        if attempt.ok:
            s.ok += 1
            self.consecutive_failures[slot] = 0
        else:
            s.errors += 1
            self.errors += 1
            if attempt.retryable:
                self.consecutive_failures[slot] += 1
                if self.consecutive_failures[slot] >= self.options.failures_before_cooldown:
                    self.consecutive_failures[slot] = 0
                    s.cooldowns += 1
                    self.router.cool_down(slot, now + self.options.cooldown_s)
        retry = (
            not attempt.ok
            and attempt.retryable
            and item.attempt < self.options.retry.max_attempts
            and not self.stopping
        )
        if retry:
            attempt.will_retry = True
            item.attempt += 1
            self.queue.requeue(item, now + self.options.retry.delay(item.attempt - 1, self.rng))
        else:
            self.final[item.task.key] = attempt
        self.attempts.append(attempt)
        self._records.put_nowait(attempt)
        n = len(self.attempts)
        if (
            n >= self.options.min_attempts_before_stop
            and self.errors / n > self.options.stop_error_share
        ):
            self.stop(
                f"error share {self.errors}/{n} passed {self.options.stop_error_share:.0%}; "
                "check the slots (model-foundry simulate-slots for a dry run)"
            )
        self.notify()

    async def recorder(self) -> None:
        while True:
            attempt = await self._records.get()
            if attempt is None:
                return
            if self.on_attempt is None or self.record_error is not None:
                continue
            try:
                if inspect.iscoroutinefunction(self.on_attempt):
                    await self.on_attempt(attempt)
                elif self.options.record_in_thread:
                    result = await asyncio.to_thread(self.on_attempt, attempt)
                    if inspect.isawaitable(result):
                        await result
                else:
                    result = self.on_attempt(attempt)
                    if inspect.isawaitable(result):
                        await result
            except Exception as exc:
                # Losing the record of an attempt breaks resumability: stop and surface it.
                self.record_error = exc
                self.stop(f"on_attempt failed: {type(exc).__name__}: {exc}")

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
        requests = len(self.attempts)
        report["requests"] = requests
        if "kv_ops" in report and requests:
            report["kv_ops_per_request"] = round(report["kv_ops"]["total"] / requests, 3)
        if self.record_error is not None:
            raise self.record_error
        undone = self.queue.drain_keys()
        return DispatchResult(
            attempts=self.attempts,
            final=self.final,
            undone=undone,
            slots=self.summaries,
            seconds=time.monotonic() - started,
            stopped_early=self.stopping,
            stop_reason=self.stop_reason,
            limiter=report,
        )

    async def _run_workers(self, limiter: Limiter) -> None:
        clients = {
            n: SlotClient(s, request_timeout_s=self.options.request_timeout_s)
            for n, s in self.slots.items()
        }
        recorder = asyncio.create_task(self.recorder())
        try:
            workers = [
                asyncio.create_task(self.worker(s, clients[n], limiter), name=f"slot-{n}-{i}")
                for n, s in self.slots.items()
                for i in range(s.parallel)
            ]
            try:
                await asyncio.gather(*workers)
            except BaseException as exc:
                # Stop first: a worker whose cancel is swallowed (Python 3.11's wait_for inside
                # a NATS request, CPython gh-86296) then ends at its next turn instead of
                # working through the rest of the batch.
                self.stop(f"interrupted: {type(exc).__name__}")
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
        finally:
            self._records.put_nowait(None)
            with contextlib.suppress(Exception):
                await recorder
            for c in clients.values():
                with contextlib.suppress(Exception):
                    await c.aclose()


async def dispatch(
    tasks: Iterable[Task],
    slot_file: SlotFile | None = None,
    profile: str | None = None,
    *,
    on_attempt: OnAttempt | None = None,
    options: DispatchOptions | None = None,
) -> DispatchResult:
    """Run ``tasks`` on the live slots of ``profile``; every attempt goes to ``on_attempt``.

    Raises ``NoSlotForRoleError`` before sending anything when a task's role has no live slot,
    and ``ValueError`` on duplicate task keys. Slot errors never raise: they become error
    attempts, and the result lists what was left undone if the batch stopped early.
    """
    task_list = list(tasks)
    seen: set[str] = set()
    for t in task_list:
        if t.key in seen:
            raise ValueError(f"duplicate task key {t.key!r}: keys must be unique within a batch")
        seen.add(t.key)
    slot_file = slot_file or load_slot_file()
    batch = _Batch(task_list, slot_file, profile, on_attempt, options or DispatchOptions())
    if not task_list:
        return DispatchResult([], {}, [], {}, 0.0)
    return await batch.run()


def run_dispatch(
    tasks: Iterable[Task],
    slot_file: SlotFile | None = None,
    profile: str | None = None,
    *,
    on_attempt: OnAttempt | None = None,
    options: DispatchOptions | None = None,
) -> DispatchResult:
    """Synchronous ``dispatch`` for assets and the CLI; safe to call under a running loop."""
    coro_args = (tasks, slot_file, profile)
    kwargs: dict[str, Any] = {"on_attempt": on_attempt, "options": options}
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(dispatch(*coro_args, **kwargs))
    # Called from inside an event loop (e.g. a notebook): run on a fresh loop in a thread.
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(dispatch(*coro_args, **kwargs))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="model-foundry-dispatch")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


__all__ = [
    "DispatchOptions",
    "DispatchResult",
    "RetryPolicy",
    "Router",
    "SlotSummary",
    "Task",
    "WorkQueue",
    "dispatch",
    "run_dispatch",
]
