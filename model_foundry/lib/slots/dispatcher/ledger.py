"""The books of a batch: every attempt, each task's final one, per-slot numbers, in-flight.

Settling an attempt decides what follows it: a retry after backoff (the task goes back to the
queue, so another slot may take it), a cooldown of a slot that failed too often in a row (its
role's work moves to the next tier), the task's end, or the end of the batch when the error
share passes ``stop_error_share``.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator, Mapping

from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.dispatcher.progress import Progress
from model_foundry.lib.slots.dispatcher.recorder import Recorder
from model_foundry.lib.slots.dispatcher.results import SlotSummary
from model_foundry.lib.slots.dispatcher.routing import Pending, Router, WorkQueue
from model_foundry.lib.slots.dispatcher.tasks import DispatchOptions


class Ledger:
    """The attempts and numbers of one batch, and what each settled attempt leads to."""

    def __init__(
        self,
        slots: Mapping[str, Slot],
        options: DispatchOptions,
        router: Router,
        queue: WorkQueue,
        progress: Progress,
        recorder: Recorder,
    ) -> None:
        self.options = options
        self.router = router
        self.queue = queue
        self.progress = progress
        self.recorder = recorder
        self.rng = random.Random()
        self.attempts: list[Attempt] = []
        self.final: dict[str, Attempt] = {}
        self.summaries = {n: SlotSummary(n, s.parallel) for n, s in slots.items()}
        self.in_flight = dict.fromkeys(slots, 0)
        self.consecutive_failures = dict.fromkeys(slots, 0)
        self.total_in_flight = 0
        # Taken from the queue and not settled yet (in flight, or between its answer and
        # ``settle``): the batch is not idle while one is.
        self.unsettled = 0
        self.errors = 0

    @contextlib.contextmanager
    def request_on(self, slot: str, sequences: int = 1) -> Iterator[None]:
        """Counts a request of ``sequences`` choices in flight on ``slot`` while the block runs
        (in flight counts sequences, as the servers' caps do); each stays unsettled until
        ``settle``."""
        self.unsettled += sequences
        self.in_flight[slot] += sequences
        self.total_in_flight += sequences
        summary = self.summaries[slot]
        summary.max_in_flight = max(summary.max_in_flight, self.in_flight[slot])
        try:
            yield
        finally:
            self.in_flight[slot] -= sequences
            self.total_in_flight -= sequences

    def settle(self, slot: str, item: Pending, attempt: Attempt) -> None:
        """Book an attempt: retry, cool the slot down, stop the batch, or finish the task."""
        now = time.monotonic()
        self._count(slot, attempt, now)
        retry = (
            not attempt.ok
            and attempt.retryable
            and item.attempt < self.options.retry.max_attempts
            and not self.progress.stopping
        )
        if retry:
            attempt.will_retry = True
            item.attempt += 1
            self.queue.requeue(item, now + self.options.retry.delay(item.attempt - 1, self.rng))
        else:
            self.final[item.task.key] = attempt
        self.attempts.append(attempt)
        self.recorder.put(attempt)
        self.unsettled -= 1
        n = len(self.attempts)
        if (
            n >= self.options.min_attempts_before_stop
            and self.errors / n > self.options.stop_error_share
        ):
            self.progress.stop(
                f"error share {self.errors}/{n} passed {self.options.stop_error_share:.0%}; "
                "check the slots (model-foundry simulate-slots for a dry run)"
            )
        self.progress.notify()

    def _count(self, slot: str, attempt: Attempt, now: float) -> None:
        """The slot's numbers, and its cooldown after too many retryable failures in a row."""
        s = self.summaries[slot]
        s.attempts += 1
        s.busy_s += attempt.latency_s or 0.0
        s.prompt_tokens += attempt.prompt_tokens or 0
        s.completion_tokens += attempt.completion_tokens or 0
        if attempt.ok:
            s.ok += 1
            self.consecutive_failures[slot] = 0
            return
        s.errors += 1
        self.errors += 1
        if attempt.retryable:
            self.consecutive_failures[slot] += 1
            if self.consecutive_failures[slot] >= self.options.failures_before_cooldown:
                self.consecutive_failures[slot] = 0
                s.cooldowns += 1
                self.router.cool_down(slot, now + self.options.cooldown_s)


__all__ = ["Ledger"]
