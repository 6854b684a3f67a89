"""Why requests failed: one readable sentence per way of failing, counted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from model_foundry.lib.hygiene.shown import shown_text
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.errors import first_line
from model_foundry.lib.slots.fit import PROMPT_TOO_LONG
from model_foundry.lib.slots.server_errors import context_limit_from_error
from model_foundry.lib.slots.template_check import TEMPLATE_IGNORES_MESSAGES


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
    if attempt.error_class == TEMPLATE_IGNORES_MESSAGES:
        # The check's own sentence, naming the slot and the counts (recorded, not sent).
        return f"{error} (recorded, not sent)"
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
    # The server's own words may quote the prompt (a validation error shows its input):
    # causes reach Dagster's metadata and logs, so they are scrubbed before they are cut.
    if attempt.http_status is not None:
        return f"slot {slot} answered HTTP {attempt.http_status}: {shown_text(error, 200)}"
    return f"slot {slot} failed ({attempt.error_class}): {shown_text(error, 200)}"


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


__all__ = ["cause_lines", "failure_cause", "failure_causes"]
