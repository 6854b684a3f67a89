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
- ``on_attempt`` sees every finished attempt, in order, off the event loop, so the caller can
  write it to DuckDB while other requests stream; wrapped in ``InBatches`` it gets the
  attempts that finished while it last ran all at once, to write in one short transaction.
- A batch may grow: an ``InBatches(..., grows=True)`` returns the tasks its attempts made
  ready, and they join the running batch under the same caps and places (``roles`` names the
  roles they may have, so the batch starts workers on their slots).

Routing decisions (``Router``) and backoff (``RetryPolicy``) are pure and tested on their own.

Where each part lives: ``tasks`` (``Task`` and the options), ``routing`` (tiers per task, the
router and the work queue), ``place`` (a worker's held place), ``worker`` (a slot's worker and
its requests), ``ledger`` (settling attempts: retries, cooldowns, results, in-flight counts),
``progress`` (stopping and waking), ``recorder`` (``on_attempt``), ``results`` (what a batch
returns) and ``batch`` (one batch put together).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import Any

from model_foundry.lib.slots.config import SlotFile, load_slot_file
from model_foundry.lib.slots.dispatcher.batch import Batch
from model_foundry.lib.slots.dispatcher.recorder import InBatches, OnAttempt
from model_foundry.lib.slots.dispatcher.results import DispatchResult, SlotSummary
from model_foundry.lib.slots.dispatcher.routing import Router, WorkQueue
from model_foundry.lib.slots.dispatcher.tasks import DispatchOptions, RetryPolicy, Task


async def dispatch(
    tasks: Iterable[Task],
    slot_file: SlotFile | None = None,
    profile: str | None = None,
    *,
    on_attempt: OnAttempt | None = None,
    options: DispatchOptions | None = None,
    roles: Iterable[str] = (),
) -> DispatchResult:
    """Run ``tasks`` on the live slots of ``profile``; every attempt goes to ``on_attempt``
    (a growing one may add tasks of ``roles`` while the batch runs).

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
    batch = Batch(task_list, slot_file, profile, on_attempt, options or DispatchOptions(), roles)
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
    roles: Iterable[str] = (),
) -> DispatchResult:
    """Synchronous ``dispatch`` for assets and the CLI; safe to call under a running loop."""
    coro_args = (tasks, slot_file, profile)
    kwargs: dict[str, Any] = {"on_attempt": on_attempt, "options": options, "roles": roles}
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
    "InBatches",
    "OnAttempt",
    "RetryPolicy",
    "Router",
    "SlotSummary",
    "Task",
    "WorkQueue",
    "dispatch",
    "run_dispatch",
]
