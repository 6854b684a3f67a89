"""What an inbox sensor tick decides, from what it read: no NATS, no Dagster, no clock.

The sensor gathers the facts (a run for the subject still in progress, the consumer's counts
or why they could not be read, its cursor, the time) and this module turns them into a
decision, so every case is testable without a server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from model_foundry.lib.nats.consumers import ConsumerPending

ORPHANED_SINCE = "orphaned_since"


@dataclass(frozen=True, slots=True)
class TickDecision:
    """Request a run or not, why, and the cursor to keep (None: leave the cursor alone)."""

    request_run: bool
    reason: str
    cursor: str | None


def decide_inbox_tick(
    *,
    subject: str,
    run_in_progress: str | None,
    pending: ConsumerPending | None,
    unavailable: str | None,
    cursor: str | None,
    now: float,
) -> TickDecision:
    """One tick's decision.

    ``run_in_progress`` names a live run for the subject ("run ab12cd34 ... is started");
    ``pending`` is None when the counts could not be read, and ``unavailable`` says why.
    """
    if run_in_progress is not None:
        return TickDecision(False, run_in_progress, None)
    if pending is None:
        return TickDecision(False, unavailable or f"no counts for {subject}", None)
    state = json.loads(cursor) if cursor else {}
    reason = None
    if pending.num_pending > 0:
        reason = f"{pending.num_pending} messages pending"
        state.pop(ORPHANED_SINCE, None)
    elif pending.num_ack_pending > 0:
        # Delivered to a run that is gone and not acknowledged: JetStream redelivers them once
        # ack_wait has passed, so ask for a run then, not on every tick before it.
        since = state.setdefault(ORPHANED_SINCE, now)
        if now - since >= pending.ack_wait_s:
            reason = f"{pending.num_ack_pending} messages due for redelivery"
            state.pop(ORPHANED_SINCE, None)
    else:
        state.pop(ORPHANED_SINCE, None)
    if reason is None:
        return TickDecision(False, f"nothing pending on {pending.consumer}", json.dumps(state))
    return TickDecision(True, reason, json.dumps(state))


__all__ = ["ORPHANED_SINCE", "TickDecision", "decide_inbox_tick"]
