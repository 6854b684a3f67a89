"""A drain's telemetry events: one ``model_foundry.inbox_drain`` per drain and one
``model_foundry.inbox_session`` per session that got events."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from model_foundry.lib.events import DeadLetter, InboxEvent, reason_class
from model_foundry.lib.inbox.drain.record import Checked, InboxRecord
from model_foundry.lib.telemetry import Telemetry


@dataclass
class DrainTelemetry:
    """Per-session and per-reason counts of one drain, for its telemetry events."""

    telemetry: Telemetry
    sessions: Counter[str] = field(default_factory=Counter)
    dead_classes: Counter[str] = field(default_factory=Counter)

    def add(self, checked: Sequence[Checked], dead: Sequence[DeadLetter], result: Any) -> None:
        if not self.telemetry.enabled:
            return  # before any per-event work: a drain without telemetry pays nothing here
        inserted = set(result.inserted_ids)
        for c in checked:
            e = c.item
            if isinstance(e, InboxEvent) and e.event_id in inserted:
                self.sessions[e.correlation_id] += 1
        for d in dead:
            self.dead_classes[reason_class(d.reason)] += 1
        if result.conflicts:
            self.dead_classes["conflicting_duplicate"] += result.conflicts

    def emit(self, record: InboxRecord, status: str) -> None:
        if not self.telemetry.enabled:
            return
        for correlation_id, n in self.sessions.items():
            self.telemetry.emit(
                "model_foundry.inbox_session",
                correlation_id=correlation_id,
                subject=record.subject,
                inserted=n,
            )
        self.telemetry.emit(
            "model_foundry.inbox_drain",
            status=status,
            subject=record.subject,
            received=record.received,
            inserted=record.inserted,
            duplicates=record.duplicates,
            conflicts=record.conflicts,
            dead_lettered=record.dead_lettered,
            dead_letters_by_class=dict(self.dead_classes),
            batches=record.batches,
            capped=record.capped,
            seconds=record.seconds,
            events_per_s=round(record.received / record.seconds, 1) if record.seconds else 0.0,
            sessions=len(self.sessions),
        )


__all__ = ["DrainTelemetry"]
