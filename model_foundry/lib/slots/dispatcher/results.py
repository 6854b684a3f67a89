"""What a batch reports: per-slot numbers and the result of the whole run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model_foundry.lib.slots.attempt import Attempt


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


__all__ = ["DispatchResult", "SlotSummary"]
