"""The completions store: every attempt at every prompt, one DuckDB row each, resumable.

A request is identified by its *request key*: a hash of the task name, the role, the rendered
request (messages, prompt or text), the model it is planned for and the generation parameters
that change the output (the slot's defaults, the role's thinking switch and the task's own
parameters). The role is part of it so two roles that resolve to the same slot and model
(a dataset asked of ``summary`` and ``kindergarten``) are two requests, not one. A rerun looks
the keys up first: keys that already succeeded are answered from the store, everything else
(never tried, or only failed) goes to the dispatcher.

Each attempt is written in its own short transaction from the dispatcher's ``on_attempt``
callback, so a run killed midway loses only the requests that were in flight, and no DuckDB
connection is held while a slot streams an answer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import statistics
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.slots.client import Attempt, first_line
from model_foundry.lib.slots.config import Slot, SlotFile
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import (
    DispatchOptions,
    DispatchResult,
    SlotSummary,
    Task,
    run_dispatch,
)
from model_foundry.lib.slots.fit import PROMPT_TOO_LONG, fit_request
from model_foundry.lib.slots.server_errors import context_limit_from_error
from model_foundry.lib.telemetry import Telemetry

# ---------------------------------------------------------------------------------------------
# Pure: request keys.


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def output_params(
    slot: Slot, params: dict[str, Any] | None = None, thinking: bool | None = None
) -> dict[str, Any]:
    """The parameters that decide what the model answers, in the precedence the client uses:
    the slot's request defaults, then the role's thinking switch, then the task's params."""
    defaults = slot.request_defaults.model_dump(exclude_none=True)
    merged: dict[str, Any] = {k: v for k, v in defaults.items() if v not in ({}, [])}
    if thinking is not None:
        merged["thinking"] = thinking
    merged.update(params or {})
    return merged


def request_key(
    task: str,
    model: str,
    params: dict[str, Any],
    *,
    role: str | None = None,
    messages: list[dict[str, Any]] | None = None,
    prompt: str | None = None,
    text: str | None = None,
) -> str:
    """sha256 over everything that changes the answer, and the role asked; equal keys mean
    "same request". (Keys made before the role was part of them do not match new ones: such a
    request is asked once more.)"""
    body = {
        "task": task,
        "role": role,
        "model": model,
        "params": params,
        "messages": messages,
        "prompt": prompt,
        "text": text,
    }
    return hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Request:
    """A planned request: the dispatcher's ``Task`` plus the key and what went into it."""

    key: str
    task: str
    role: str
    model: str
    params: dict[str, Any]
    output_params: dict[str, Any]
    messages: list[dict[str, Any]] | None = None
    prompt: str | None = None
    text: str | None = None
    # The session the request works for (summaries, translations): telemetry only, not keyed.
    correlation_id: str | None = None
    # Set by ``fit_requests``: the slots whose context holds it (None: any), or why none does.
    only_slots: tuple[str, ...] | None = None
    unfit_reason: str | None = None

    def to_task(self) -> Task:
        return Task(
            key=self.key,
            task=self.task,
            role=self.role,
            messages=self.messages,
            prompt=self.prompt,
            text=self.text,
            params=dict(self.params),
            only_slots=self.only_slots,
        )

    def request_json(self) -> str:
        return _canonical({"messages": self.messages, "prompt": self.prompt, "text": self.text})


def plan_request(
    slot_file: SlotFile,
    task: str,
    role: str,
    *,
    profile: str | None = None,
    messages: list[dict[str, Any]] | None = None,
    prompt: str | None = None,
    text: str | None = None,
    params: dict[str, Any] | None = None,
    correlation_id: str | None = None,
) -> Request:
    """Key a request for the slot that would serve ``role`` first in the active profile.

    A fallback slot may end up answering (while the first one cools down); the row records
    the slot and model that did, the key stays the planned one so a rerun finds it.
    """
    slot = slot_file.slots_for_role(role, profile)[0]
    params = dict(params or {})
    effective = output_params(slot, params, slot_file.thinking_for_role(role))
    key = request_key(
        task, slot.model, effective, role=role, messages=messages, prompt=prompt, text=text
    )
    return Request(
        key=key,
        task=task,
        role=role,
        model=slot.model,
        params=params,
        output_params=effective,
        messages=messages,
        prompt=prompt,
        text=text,
        correlation_id=correlation_id,
    )


def fit_requests(
    requests: Sequence[Request],
    book: ContextBook,
    slot_file: SlotFile,
    profile: str | None = None,
) -> list[Request]:
    """``requests`` narrowed to the slots whose context windows hold them (see ``fit.py``)."""
    fitted = []
    for r in requests:
        fit = fit_request(
            book, slot_file, r.role, profile=profile, messages=r.messages, prompt=r.prompt,
            text=r.text, params=r.params,
        )  # fmt: skip
        fitted.append(dataclasses.replace(r, only_slots=fit.only_slots, unfit_reason=fit.reason))
    return fitted


def unfit_attempt(request: Request, slot_file: SlotFile, profile: str | None) -> Attempt:
    """The recorded failure of a request no slot's context can hold: never sent, not retried."""
    slot = slot_file.slots_for_role(request.role, profile)[0]
    return Attempt(
        key=request.key,
        task=request.task,
        role=request.role,
        slot=slot.name,
        model=request.model,
        runtime=slot.runtime,
        status="error",
        error_class=PROMPT_TOO_LONG,
        error=request.unfit_reason,
        retryable=False,
        latency_s=0.0,
    )


def completion_event(attempt: Attempt, request: Request) -> dict[str, Any]:
    """The ``model_foundry.completion`` telemetry fields of one attempt: figures, no text."""
    return {
        "correlation_id": request.correlation_id,
        "task": attempt.task,
        "role": attempt.role,
        "slot": attempt.slot,
        "model": attempt.model,
        "runtime": attempt.runtime,
        "status": attempt.status,
        "attempt": attempt.attempt,
        "will_retry": attempt.will_retry,
        "error_class": attempt.error_class,
        "http_status": attempt.http_status,
        "finish_reason": attempt.finish_reason,
        "prompt_tokens": attempt.prompt_tokens,
        "generation_tokens": attempt.completion_tokens,
        "ttft_s": attempt.ttft_s,
        "latency_s": attempt.latency_s,
        "prompt_tps": attempt.prompt_tps,
        "gen_tps": attempt.gen_tps,
        "request_key": request.key,
    }


def failure_cause(attempt: Attempt, slot_urls: Mapping[str, str] | None = None) -> str:
    """One readable sentence for why an attempt failed, the same for every attempt that failed
    the same way (so they can be counted)."""
    slot = attempt.slot
    error = first_line(attempt.error or "") or ""
    if attempt.error_class == PROMPT_TOO_LONG:
        return (
            f"prompt too long for the context of every slot serving role {attempt.role!r} "
            "(recorded, not sent)"
        )
    if attempt.error_class == "EmptyAnswer":
        return f"empty answer from slot {slot}: {error or 'the slot returned an empty answer'}"
    if attempt.http_status == 400 and (
        context_limit_from_error(error) is not None or "context" in error.lower()
    ):
        limit = context_limit_from_error(error)
        size = f" of {limit} tokens" if limit else ""
        return f"slot {slot} rejected the prompt as too long for its context{size} (HTTP 400)"
    if attempt.error_class in ("TimeoutError", "APITimeoutError", "ReadTimeout"):
        return f"slot {slot} timed out"
    if attempt.error_class in ("APIConnectionError", "ConnectError", "ConnectionError"):
        url = (slot_urls or {}).get(slot)
        return f"slot {slot} unreachable: {url}" if url else f"slot {slot} unreachable"
    if attempt.http_status is not None:
        return f"slot {slot} answered HTTP {attempt.http_status}: {error[:200]}"
    return f"slot {slot} failed ({attempt.error_class}): {error[:200]}"


def failure_causes(
    attempts: Iterable[Attempt], slot_urls: Mapping[str, str] | None = None
) -> dict[str, int]:
    """How many requests finally failed for each cause (attempts followed by a retry are not
    counted: the retry tells how the request ended), most frequent first, then by name."""
    counts = Counter(failure_cause(a, slot_urls) for a in attempts if not a.ok and not a.will_retry)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def cause_lines(causes: Mapping[str, int], indent: str = "    ") -> list[str]:
    """``failure_causes`` for a terminal: one line per cause, with its count."""
    return [f"{indent}{n} failed: {cause}" for cause, n in causes.items()]


# ---------------------------------------------------------------------------------------------
# I/O: the store.


@dataclass(frozen=True)
class Completion:
    """The successful answer to a request, from this run or an earlier one."""

    request_key: str
    content: str
    reasoning: str | None
    slot: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    gen_tps: float | None
    finish_reason: str | None
    reused: bool = False


@dataclass
class CompletionBatch:
    """What one call to :meth:`CompletionStore.run` did."""

    requested: int
    results: dict[str, Completion] = field(default_factory=dict)
    reused: int = 0
    sent: int = 0
    failed: list[str] = field(default_factory=list)
    dispatch: DispatchResult | None = None
    # Requests no slot's context can hold: key -> reason. Recorded, never sent.
    unfit: dict[str, str] = field(default_factory=dict)
    unfit_attempts: list[Attempt] = field(default_factory=list)

    @classmethod
    def merged(cls, batches: Sequence[CompletionBatch]) -> CompletionBatch:
        """One batch for several rounds of one asset (map and reduce of summaries)."""
        out = cls(requested=sum(b.requested for b in batches))
        dispatches = [b.dispatch for b in batches if b.dispatch is not None]
        for b in batches:
            out.results.update(b.results)
            out.reused += b.reused
            out.sent += b.sent
            out.failed += b.failed
            out.unfit.update(b.unfit)
            out.unfit_attempts += b.unfit_attempts
            out.slot_urls.update(b.slot_urls)
        if dispatches:
            slots: dict[str, SlotSummary] = {}
            for d in dispatches:
                for name, s in d.slots.items():
                    into = slots.setdefault(name, SlotSummary(name, s.parallel))
                    into.attempts += s.attempts
                    into.ok += s.ok
                    into.errors += s.errors
                    into.max_in_flight = max(into.max_in_flight, s.max_in_flight)
                    into.prompt_tokens += s.prompt_tokens
                    into.completion_tokens += s.completion_tokens
                    into.busy_s += s.busy_s
                    into.cooldowns += s.cooldowns
            stopped = [d for d in dispatches if d.stopped_early]
            out.dispatch = DispatchResult(
                attempts=[a for d in dispatches for a in d.attempts],
                final={k: a for d in dispatches for k, a in d.final.items()},
                undone=[k for d in dispatches for k in d.undone],
                slots=slots,
                seconds=sum(d.seconds for d in dispatches),
                stopped_early=bool(stopped),
                stop_reason=stopped[0].stop_reason if stopped else None,
                limiter=next((d.limiter for d in reversed(dispatches) if d.limiter), {}),
            )
        return out

    # Slot name -> base_url, so an unreachable slot's cause names where it was looked for.
    slot_urls: dict[str, str] = field(default_factory=dict)

    def failure_causes(self) -> dict[str, int]:
        """Failed requests by cause; requests never sent (the batch stopped) count as one."""
        attempts = [*(self.dispatch.attempts if self.dispatch else []), *self.unfit_attempts]
        causes = failure_causes(attempts, self.slot_urls)
        unsent = len(self.failed) - sum(causes.values())
        if unsent > 0:
            why = self.dispatch.stop_reason if self.dispatch else None
            causes[f"not sent: {why or 'the batch ended before they were sent'}"] = unsent
        return causes

    @property
    def new_results(self) -> list[Completion]:
        return [c for c in self.results.values() if not c.reused]

    def metadata(self) -> dict[str, Any]:
        """Counts, slots used and per-slot tokens/s for a materialization (plain values: Dagster
        shows the dicts and lists as JSON)."""
        per_slot: dict[str, dict[str, Any]] = {}
        for c in self.new_results:
            s = per_slot.setdefault(
                c.slot,
                {"model": c.model, "ok": 0, "completion_tokens": 0, "busy_s": 0.0},
            )
            s["ok"] += 1
            s["completion_tokens"] += c.completion_tokens or 0
            s["busy_s"] += c.latency_s or 0.0
        for s in per_slot.values():
            busy = s.pop("busy_s")
            s["gen_tps"] = round(s["completion_tokens"] / busy, 1) if busy else None
        tokens = sum(s["completion_tokens"] for s in per_slot.values())
        busy_total = sum(c.latency_s or 0.0 for c in self.new_results)
        meta: dict[str, Any] = {
            "requests": self.requested,
            "reused_from_store": self.reused,
            "sent": self.sent,
            "ok": len(self.results),
            "failed": len(self.failed),
            "prompts_too_long": len(self.unfit),
            "failure_causes": self.failure_causes(),
            "attempts": len(self.dispatch.attempts) if self.dispatch else 0,
            "slots_used": sorted(per_slot),
            "per_slot": per_slot,
            "completion_tokens": tokens,
            "gen_tokens_per_s": round(tokens / busy_total, 1) if busy_total else 0.0,
        }
        if self.dispatch is not None and self.dispatch.stop_reason:
            meta["stop_reason"] = self.dispatch.stop_reason
        meta.update(self.plot_metadata(per_slot))
        meta.update(limiter_metadata(self.dispatch.limiter if self.dispatch else {}))
        return meta

    def plot_metadata(self, per_slot: dict[str, dict[str, Any]]) -> dict[str, float]:
        """Flat float entries, one per figure and slot, which Dagster's Plots tab draws."""
        attempts = self.dispatch.attempts if self.dispatch else []
        errors = sum(1 for a in attempts if not a.ok)
        plots: dict[str, float] = {
            "error_share": round(errors / len(attempts), 4) if attempts else 0.0
        }
        for slot, figures in sorted(per_slot.items()):
            if figures["gen_tps"] is not None:
                plots[f"gen_tps/{slot}"] = float(figures["gen_tps"])
        ttfts: dict[str, list[float]] = {}
        for a in attempts:
            if a.ok and a.ttft_s is not None:
                ttfts.setdefault(a.slot, []).append(a.ttft_s)
        for slot, values in sorted(ttfts.items()):
            plots[f"ttft_s/{slot}"] = round(statistics.median(values), 4)
        return plots


def limiter_metadata(report: dict[str, Any]) -> dict[str, Any]:
    """Which limiter kept the slots within ``parallel`` for this run, and what it cost."""
    if not report:
        return {"slot_limiter": "none (no request sent)"}
    meta: dict[str, Any] = {
        "slot_limiter": report["kind"],
        "slot_limiter_detail": report,
    }
    if report.get("kv_ops_per_request") is not None:
        meta["slot_lease_kv_ops_per_request"] = report["kv_ops_per_request"]
    return meta


Progress = Callable[[int, int], None]


class CompletionStore:
    """Reads and writes ``llm_completions`` in ``db_path``, one short transaction at a time."""

    def __init__(
        self,
        db_path: str | Path,
        *,
        run_id: str | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.db_path = Path(db_path)
        self.run_id = run_id
        self.telemetry = telemetry or Telemetry.disabled()

    def finished(self, keys: Iterable[str]) -> dict[str, Completion]:
        """The latest successful attempt of each key that has one."""
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        with storage.connect(self.db_path) as con:
            rows = con.execute(
                """
                SELECT request_key, content, reasoning, slot, model, prompt_tokens,
                       completion_tokens, latency_s, gen_tps, finish_reason
                FROM llm_completions
                WHERE status = 'ok' AND request_key IN (SELECT unnest(?::VARCHAR[]))
                    -- Blank answers stored as ok before they became EmptyAnswer errors are
                    -- not answers: such a request is asked again.
                    AND regexp_matches(coalesce(content, ''), '[^[:space:]]')
                QUALIFY row_number() OVER (PARTITION BY request_key ORDER BY recorded_at DESC) = 1
                """,
                [keys],
            ).fetchall()
        return {r[0]: Completion(*r[:1], r[1] or "", *r[2:], reused=True) for r in rows}

    def record(self, attempt: Attempt, request: Request) -> None:
        """Write one attempt in its own transaction (called by the dispatcher, off its loop)."""
        row = (
            str(uuid.uuid4()),
            request.key,
            attempt.task,
            attempt.role,
            attempt.slot,
            attempt.model,
            attempt.runtime,
            attempt.status,
            attempt.attempt,
            attempt.will_retry,
            attempt.error_class,
            attempt.error,
            attempt.http_status,
            attempt.prompt_tokens,
            attempt.completion_tokens,
            attempt.latency_s,
            attempt.ttft_s,
            attempt.prompt_tps,
            attempt.gen_tps,
            attempt.finish_reason,
            attempt.content,
            attempt.reasoning,
            request.model,
            _canonical(request.output_params),
            request.request_json(),
            self.run_id,
            attempt.started_at,
        )

        def work(con: Any) -> None:
            con.execute(
                """
                INSERT INTO llm_completions (
                    attempt_id, request_key, task, role, slot, model, runtime, status, attempt,
                    will_retry, error_class, error, http_status, prompt_tokens,
                    completion_tokens, latency_s, ttft_s, prompt_tps, gen_tps, finish_reason,
                    content, reasoning, planned_model, params, request, run_id, started_at
                ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                          ?, ?, ?, ?)
                """,
                row,
            )

        storage.run_in_transaction(self.db_path, work)
        self.telemetry.emit("model_foundry.completion", completion_event(attempt, request))

    def run(
        self,
        requests: Sequence[Request],
        slot_file: SlotFile,
        profile: str | None = None,
        *,
        options: DispatchOptions | None = None,
        progress: Progress | None = None,
    ) -> CompletionBatch:
        """Answer ``requests``: from the store where a key succeeded before, else from the slots."""
        unique = {r.key: r for r in requests}
        batch = CompletionBatch(
            requested=len(unique),
            slot_urls={n: s.base_url for n, s in slot_file.slots.items()},
        )
        done = self.finished(unique)
        batch.results.update(done)
        batch.reused = len(done)
        todo = [r for k, r in unique.items() if k not in done]
        unfit = [r for r in todo if r.unfit_reason is not None]
        if unfit:
            self._record_unfit(unfit, batch, slot_file, profile)
            todo = [r for r in todo if r.unfit_reason is None]
        batch.sent = len(todo)
        if not todo:
            batch.failed = [r.key for r in unfit]
            return batch
        lock = threading.Lock()
        finished_count = [0]

        def on_attempt(attempt: Attempt) -> None:
            self.record(attempt, unique[attempt.key])
            if attempt.ok:
                batch.results[attempt.key] = Completion(
                    request_key=attempt.key,
                    content=attempt.content or "",
                    reasoning=attempt.reasoning,
                    slot=attempt.slot,
                    model=attempt.model,
                    prompt_tokens=attempt.prompt_tokens,
                    completion_tokens=attempt.completion_tokens,
                    latency_s=attempt.latency_s,
                    gen_tps=attempt.gen_tps,
                    finish_reason=attempt.finish_reason,
                )
            if not attempt.will_retry and progress is not None:
                with lock:
                    finished_count[0] += 1
                    n = finished_count[0]
                progress(n, len(todo))

        batch.dispatch = run_dispatch(
            [r.to_task() for r in todo],
            slot_file,
            profile,
            on_attempt=on_attempt,
            options=options,
        )
        batch.failed = [r.key for r in unfit] + [r.key for r in todo if r.key not in batch.results]
        return batch

    def _record_unfit(
        self,
        unfit: list[Request],
        batch: CompletionBatch,
        slot_file: SlotFile,
        profile: str | None,
    ) -> None:
        """Record each too-long request once (not again while its reason stays the same)."""
        recorded = self.last_errors([r.key for r in unfit])
        for r in unfit:
            attempt = unfit_attempt(r, slot_file, profile)
            batch.unfit[r.key] = r.unfit_reason or ""
            batch.unfit_attempts.append(attempt)
            if recorded.get(r.key) != (PROMPT_TOO_LONG, r.unfit_reason):
                self.record(attempt, r)

    def last_errors(self, keys: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        """(error class, error) of each key's latest attempt, where it failed."""
        if not keys:
            return {}
        with storage.connect(self.db_path) as con:
            rows = con.execute(
                """
                SELECT request_key, error_class, error FROM llm_completions
                WHERE request_key IN (SELECT unnest(?::VARCHAR[]))
                QUALIFY row_number() OVER (PARTITION BY request_key ORDER BY recorded_at DESC) = 1
                """,
                [list(keys)],
            ).fetchall()
        return {k: (cls, err) for k, cls, err in rows if cls is not None}


def progress_logger(log: Callable[[str], Any], label: str, every: int = 25) -> Progress:
    """A progress callback that logs every ``every`` requests and at the end."""

    def report(done: int, total: int) -> None:
        if done == total or done % every == 0:
            log(f"{label}: {done}/{total} requests finished")

    return report
