"""A round of requests that grows: each settled request may make others ready, and they are
asked in the same dispatcher batch, so no request waits for a round to end.

Every request goes the way of a plain round (``answer.py``): fitted to the slots' context
windows (one that fits none is recorded once and never sent), taken from the store where its
key succeeded before, else sent, every attempt stored as it settles. The caller's
``settled`` hears each request once, with its answer or None (those that settle together in
one call), and returns the requests they made ready; those already answered in the store
settle at once, the rest join the running batch (``InBatches(..., grows=True)``) under the
same caps and places.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.llm.answer import Progress, record_unfit, warn_unfit
from model_foundry.lib.llm.batch import CompletionBatch
from model_foundry.lib.llm.request import Planned, fit
from model_foundry.lib.llm.store import Completion, CompletionStore
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions, InBatches, Task, run_dispatch

# Requests settled (each with its answer, or None when it failed or was not sent): the
# requests they made ready. Each key is settled once; calls never overlap.
Settled = Callable[[Sequence[tuple[Planned, Completion | None]]], Iterable[Planned]]


class Stream:
    """One growing round; ``run`` it once."""

    def __init__(
        self,
        store: CompletionStore,
        book: ContextBook,
        slot_file: SlotFile,
        profile: str | None,
        label: str,
        warn: Callable[[str], Any],
    ) -> None:
        self.store = store
        self.book = book
        self.slot_file = slot_file
        self.profile = profile
        self.label = label
        self.warn = warn
        self.batch = CompletionBatch(
            requested=0, slot_urls={n: s.base_url for n, s in slot_file.slots.items()}
        )
        self.sent: dict[str, Planned] = {}
        self.seen: set[str] = set()
        self.settled: Settled = lambda _done: ()
        self.progress: Progress | None = None
        self.finished = 0

    def run(
        self,
        first: Sequence[Planned],
        settled: Settled,
        roles: Iterable[str],
        options: DispatchOptions,
        progress: Progress | None = None,
    ) -> CompletionBatch:
        self.settled, self.progress = settled, progress
        tasks = self.admit(first)
        if tasks:
            self.batch.dispatch = run_dispatch(
                tasks, self.slot_file, self.profile, options=options, roles=roles,
                on_attempt=InBatches(self.on_attempts, grows=True),
            )  # fmt: skip
        self.batch.failed += [k for k in self.sent if k not in self.batch.results]
        return self.batch

    def admit(self, requests: Iterable[Planned]) -> list[Task]:
        """The tasks to send of ``requests``: those the store has answered or no slot can
        take settle here, and what they make ready is admitted in turn."""
        tasks: list[Task] = []
        todo = list(requests)
        while todo:
            fresh = list({r.key: r for r in todo if r.key not in self.seen}.values())
            self.seen.update(r.key for r in fresh)
            self.batch.requested += len(fresh)
            fitted = fit(fresh, self.book, self.slot_file, self.profile)
            warn_unfit(self.warn, self.label, fitted)
            if not fitted:
                break
            # The store's reads and writes here on one open of the file (fitting, which may
            # ask a server, came before).
            with storage.held(self.store.db_path):
                done = self.store.finished(r.key for r in fitted)
                unfit = [r for r in fitted if r.key not in done and r.unfit_reason is not None]
                record_unfit(self.store, unfit, self.batch, self.slot_file)
                self.batch.failed += [r.key for r in unfit]
                now: list[tuple[Planned, Completion | None]] = []
                for r in fitted:
                    if r.key in done:
                        self.batch.results[r.key] = done[r.key]
                        self.batch.reused += 1
                        now.append((r, done[r.key]))
                    elif r.unfit_reason is not None:
                        now.append((r, None))
                    else:
                        self.sent[r.key] = r
                        self.batch.sent += 1
                        tasks.append(r.to_task())
                todo = list(self.settled(now)) if now else []
        return tasks

    def on_attempts(self, attempts: Sequence[Attempt]) -> list[Task]:
        """The dispatcher's growing ``on_attempt``: store the attempts, settle the finished
        ones, and hand back the tasks they made ready."""
        # The attempts' rows and what the caller writes as they settle, on one open of the
        # file (``storage.held``); admitting the new requests may ask a server to count
        # tokens, so it comes after.
        with storage.held(self.store.db_path):
            self.store.record_many([(a, self.sent[a.key]) for a in attempts])
            now: list[tuple[Planned, Completion | None]] = []
            for attempt in attempts:
                if attempt.ok:
                    self.batch.results[attempt.key] = Completion.of(attempt)
                if attempt.will_retry:
                    continue
                self.finished += 1
                if self.progress is not None:
                    self.progress(self.finished, self.batch.sent)
                now.append((self.sent[attempt.key], self.batch.results.get(attempt.key)))
            ready = list(self.settled(now)) if now else []
        return self.admit(ready)


__all__ = ["Settled", "Stream"]
