"""What asking the slots for a batch of requests did: answers, failures, figures.

Metadata here is plain (numbers, strings, dicts and lists); the assets wrap it for Dagster.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from model_foundry.lib.hygiene.shown import shown_text
from model_foundry.lib.llm.causes import failure_causes
from model_foundry.lib.llm.store import Completion
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.dispatcher import DispatchResult, SlotSummary


@dataclass
class CompletionBatch:
    """What one round of requests did (see ``answer``); rounds merge into one (``merged``)."""

    requested: int
    results: dict[str, Completion] = field(default_factory=dict)
    reused: int = 0
    sent: int = 0
    failed: list[str] = field(default_factory=list)
    dispatch: DispatchResult | None = None
    # Requests no slot's context can hold: key -> reason. Recorded, never sent.
    unfit: dict[str, str] = field(default_factory=dict)
    unfit_attempts: list[Attempt] = field(default_factory=list)
    # Slot name -> base_url, so an unreachable slot's cause names where it was looked for.
    slot_urls: dict[str, str] = field(default_factory=dict)

    @classmethod
    def merged(cls, batches: Sequence[CompletionBatch]) -> CompletionBatch:
        """One batch for several rounds of one asset (map and reduce of summaries)."""
        out = cls(requested=sum(b.requested for b in batches))
        for b in batches:
            out.results.update(b.results)
            out.reused += b.reused
            out.sent += b.sent
            out.failed += b.failed
            out.unfit.update(b.unfit)
            out.unfit_attempts += b.unfit_attempts
            out.slot_urls.update(b.slot_urls)
        dispatches = [b.dispatch for b in batches if b.dispatch is not None]
        if dispatches:
            out.dispatch = _merged_dispatch(dispatches)
        return out

    def why(self, key: str) -> str:
        """Why the request ``key`` has no answer, in one sentence (a slot's words scrubbed:
        the sentence goes to Dagster's logs and metadata)."""
        if key in self.unfit:
            return self.unfit[key]
        if self.dispatch is not None:
            final = self.dispatch.final.get(key)
            if final is not None and final.error:
                return shown_text(final.error)
            if key in self.dispatch.undone:
                return self.stop_reason or "the batch stopped before it was sent"
        return "no answer"

    @property
    def stop_reason(self) -> str | None:
        """Why the dispatch stopped early, scrubbed (an exception's message may quote data)."""
        reason = self.dispatch.stop_reason if self.dispatch else None
        return shown_text(reason) if reason else None

    def failure_causes(self) -> dict[str, int]:
        """Failed requests by cause; requests never sent (the batch stopped) count as one."""
        attempts = [*(self.dispatch.attempts if self.dispatch else []), *self.unfit_attempts]
        causes = failure_causes(attempts, self.slot_urls)
        unsent = len(self.failed) - sum(causes.values())
        if unsent > 0:
            why = self.stop_reason or "the batch ended before they were sent"
            causes[f"not sent: {why}"] = unsent
        return causes

    @property
    def new_results(self) -> list[Completion]:
        return [c for c in self.results.values() if not c.reused]

    def per_slot(self) -> dict[str, dict[str, Any]]:
        """This run's answers by slot: model, count, tokens and tokens per second."""
        per_slot: dict[str, dict[str, Any]] = {}
        busy: dict[str, float] = {}
        for c in self.new_results:
            s = per_slot.setdefault(c.slot, {"model": c.model, "ok": 0, "completion_tokens": 0})
            s["ok"] += 1
            s["completion_tokens"] += c.completion_tokens or 0
            busy[c.slot] = busy.get(c.slot, 0.0) + (c.latency_s or 0.0)
        for slot, s in per_slot.items():
            s["gen_tps"] = round(s["completion_tokens"] / busy[slot], 1) if busy[slot] else None
        return per_slot

    def metadata(self) -> dict[str, Any]:
        """Counts, causes, slots used and per-slot tokens/s for a materialization."""
        per_slot = self.per_slot()
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
        if self.stop_reason:
            meta["stop_reason"] = self.stop_reason
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


def _merged_dispatch(dispatches: Sequence[DispatchResult]) -> DispatchResult:
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
    return DispatchResult(
        attempts=[a for d in dispatches for a in d.attempts],
        final={k: a for d in dispatches for k, a in d.final.items()},
        undone=[k for d in dispatches for k in d.undone],
        slots=slots,
        seconds=sum(d.seconds for d in dispatches),
        stopped_early=bool(stopped),
        stop_reason=stopped[0].stop_reason if stopped else None,
        limiter=next((d.limiter for d in reversed(dispatches) if d.limiter), {}),
    )


def limiter_metadata(report: dict[str, Any]) -> dict[str, Any]:
    """Which limiter kept the slots within ``parallel`` for this run, and what it cost."""
    if not report:
        return {"slot_limiter": "none (no request sent)"}
    meta: dict[str, Any] = {"slot_limiter": report["kind"], "slot_limiter_detail": report}
    if report.get("kv_ops_per_request") is not None:
        meta["slot_lease_kv_ops_per_request"] = report["kv_ops_per_request"]
    return meta


__all__ = ["CompletionBatch", "limiter_metadata"]
