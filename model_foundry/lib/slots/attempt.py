"""The attempt record: one request to one slot, what came back and how fast; one row of
``llm_completions``. An answer that came back empty is an error attempt, retried."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

Status = Literal["ok", "error"]


@dataclass
class Attempt:
    """One request to one slot: what was asked, what came back, how fast. One DuckDB row."""

    key: str
    task: str
    role: str
    slot: str
    model: str
    runtime: str
    status: Status
    attempt: int = 1
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    error_class: str | None = None
    error: str | None = None
    http_status: int | None = None
    # Whether trying again may succeed (network, timeout, 5xx, 429); a 400 never does.
    retryable: bool = False
    # Set by the dispatcher: this failed attempt will be followed by another one.
    will_retry: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    ttft_s: float | None = None
    prompt_tps: float | None = None
    gen_tps: float | None = None
    finish_reason: str | None = None
    content: str | None = None
    reasoning: str | None = None
    # Of prompt_tokens, those the server reused from its prompt cache; None: it did not say.
    cached_prompt_tokens: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_row(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def empty_answer_reason(
    finish_reason: str | None, reasoning: str | None, max_tokens: int | None
) -> str:
    """Why a request that succeeded over HTTP brought no answer, in one sentence."""
    if finish_reason == "length" and reasoning and reasoning.strip():
        budget = f"all {max_tokens}" if max_tokens else "all its"
        return (
            f"the model spent {budget} max_tokens on reasoning and wrote no answer; "
            "raise max_tokens or switch thinking off for this role"
        )
    return "the slot returned an empty answer"


def reject_empty_answer(result: Attempt, max_tokens: int | None) -> Attempt:
    """An empty (or blank) answer is an error, retried like a dropped stream.

    Stored as ``ok`` it would be reused by every later run (the store reuses ``ok`` rows), so
    the prompt would never be asked again; as an error a later run asks again.
    """
    result.status = "error"
    result.error_class = "EmptyAnswer"
    result.error = empty_answer_reason(result.finish_reason, result.reasoning, max_tokens)
    result.content = None
    # Sampling differs between tries (and another slot may take the retry), so a plain empty
    # answer may pass next time. One cut off by max_tokens while still reasoning would only
    # burn the same budget again: it waits for the next run (or a changed slot file).
    result.retryable = not (
        result.finish_reason == "length" and bool(result.reasoning and result.reasoning.strip())
    )
    return result


__all__ = ["Attempt", "Status", "empty_answer_reason", "reject_empty_answer"]
