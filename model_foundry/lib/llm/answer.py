"""Answering planned requests: from the store where a key succeeded before, else the slots.

A request no slot's context holds is recorded once as ``PromptTooLong`` (not again while its
reason stays the same) and never sent; the rest go to the dispatcher, and every attempt is
written to the store as it settles (those settling together in one transaction).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from model_foundry.lib.llm.batch import CompletionBatch
from model_foundry.lib.llm.request import Planned, unfit_attempt
from model_foundry.lib.llm.store import Completion, CompletionStore
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.slots.dispatcher import DispatchOptions, InBatches, run_dispatch
from model_foundry.lib.slots.fit import PROMPT_TOO_LONG

# (requests finished, requests sent): called once per request, when it has settled.
Progress = Callable[[int, int], None]


def progress_logger(log: Callable[[str], Any], label: str, every: int = 25) -> Progress:
    """A progress callback that logs every ``every`` requests and at the end."""

    def report(done: int, total: int) -> None:
        if done == total or done % every == 0:
            log(f"{label}: {done}/{total} requests finished")

    return report


def answer(
    store: CompletionStore,
    requests: Sequence[Planned],
    slot_file: SlotFile,
    profile: str | None = None,
    *,
    options: DispatchOptions | None = None,
    progress: Progress | None = None,
) -> CompletionBatch:
    """Answer ``requests``: from the store where a key succeeded before, else from the slots."""
    unique = {r.key: r for r in requests}
    batch = CompletionBatch(
        requested=len(unique), slot_urls={n: s.base_url for n, s in slot_file.slots.items()}
    )
    done = store.finished(unique)
    batch.results.update(done)
    batch.reused = len(done)
    todo = [r for k, r in unique.items() if k not in done]
    unfit = [r for r in todo if r.unfit_reason is not None]
    record_unfit(store, unfit, batch, slot_file)
    todo = [r for r in todo if r.unfit_reason is None]
    batch.sent = len(todo)
    if todo:
        batch.dispatch = run_dispatch(
            [r.to_task() for r in todo],
            slot_file,
            profile,
            on_attempt=_recorder(store, unique, batch, len(todo), progress),
            options=options,
        )
    batch.failed = [r.key for r in unfit] + [r.key for r in todo if r.key not in batch.results]
    return batch


def _recorder(
    store: CompletionStore,
    requests: dict[str, Planned],
    batch: CompletionBatch,
    total: int,
    progress: Progress | None,
) -> InBatches:
    """The dispatcher's ``on_attempt``: store the attempts waiting together, keep the
    answers, report progress."""
    finished = 0

    def on_attempts(attempts: Sequence[Attempt]) -> None:
        nonlocal finished
        store.record_many([(a, requests[a.key]) for a in attempts])
        for attempt in attempts:
            if attempt.ok:
                batch.results[attempt.key] = Completion.of(attempt)
            if not attempt.will_retry and progress is not None:
                finished += 1
                progress(finished, total)

    return InBatches(on_attempts)


def record_unfit(
    store: CompletionStore,
    unfit: list[Planned],
    batch: CompletionBatch,
    slot_file: SlotFile,
) -> None:
    """Record each request no slot can take once (not again while its reason stays the
    same)."""
    attempts = [unfit_attempt(r, slot_file) for r in unfit]
    recorded = store.last_errors([r.key for r in unfit])
    for r, attempt in zip(unfit, attempts, strict=True):
        batch.unfit[r.key] = r.unfit_reason or ""
        batch.unfit_attempts.append(attempt)
        if recorded.get(r.key) != (r.unfit_cause, r.unfit_reason):
            store.record(attempt, r)


def warn_unfit(warn: Callable[[str], Any], label: str, fitted: Sequence[Planned]) -> None:
    """One warning per cause for the requests no slot can take (they are not sent)."""
    unfit = [r for r in fitted if r.unfit_reason]
    for cause in sorted({r.unfit_cause for r in unfit}):
        some = [r for r in unfit if r.unfit_cause == cause]
        what = "fit no slot's context" if cause == PROMPT_TOO_LONG else "have no usable slot"
        warn(f"{label}: {len(some)} prompts {what} and are not sent, e.g.: {some[0].unfit_reason}")


__all__ = ["Progress", "answer", "progress_logger", "record_unfit", "warn_unfit"]
