"""What a drain fetched and did: each message as the contract saw it, and the run's record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from nats.aio.msg import Msg

from model_foundry.lib.events import DeadLetter, InboxEvent, validate_message
from model_foundry.lib.inbox.store import BatchResult
from model_foundry.lib.nats.pull import delivery

# Metadata and the returned record keep at most this many ids, so a drain of a million events
# stays small in the Dagster event log.
MAX_RECORDED_IDS = 1000


@dataclass(slots=True)
class Checked:
    """One fetched message and what the contract made of it."""

    msg: Msg
    item: InboxEvent | DeadLetter
    deliveries: int


def validate_batch(msgs: Sequence[Msg]) -> list[Checked]:
    received_at = datetime.now(UTC)
    checked = []
    for msg in msgs:
        # The ack subject carries the stream sequence, the delivery count and the time the
        # stream stored the message, which is the same on every redelivery.
        seen = delivery(msg)
        item = validate_message(
            msg.subject, msg.data, seen.stream_seq, received_at, seen.published_at
        )
        checked.append(Checked(msg, item, seen.deliveries))
    return checked


@dataclass
class InboxRecord:
    """What one drain of one subject did; the asset's output, the same keys when empty."""

    subject: str
    received: int = 0
    inserted: int = 0
    duplicates: int = 0
    conflicts: int = 0
    dead_lettered: int = 0
    batches: int = 0
    first_stream_seq: int | None = None
    last_stream_seq: int | None = None
    event_ids: list[str] = field(default_factory=list)
    correlation_ids: list[str] = field(default_factory=list)
    events: list[dict[str, str]] = field(default_factory=list)
    dead_letter_reasons: list[str] = field(default_factory=list)
    capped: bool = False
    seconds: float = 0.0
    # The durable consumers drained: one, or one per subject name on NATS 2.9.
    consumers: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def add_batch(
        self, checked: Sequence[Checked], result: BatchResult, dead: Sequence[Any]
    ) -> None:
        self.batches += 1
        self.received += len(checked)
        self.inserted += len(result.inserted_ids)
        self.duplicates += result.duplicates
        self.conflicts += result.conflicts
        self.dead_lettered += result.dead_lettered
        seqs = [c.item.stream_seq for c in checked]
        if seqs:
            low, high = min(seqs), max(seqs)
            self.first_stream_seq = (
                low if self.first_stream_seq is None else min(low, self.first_stream_seq)
            )
            self.last_stream_seq = (
                high if self.last_stream_seq is None else max(high, self.last_stream_seq)
            )
        events = [c.item for c in checked if isinstance(c.item, InboxEvent)]
        self._add_ids(events, result)
        for d in dead:
            if len(self.dead_letter_reasons) < MAX_RECORDED_IDS:
                self.dead_letter_reasons.append(f"seq {d.stream_seq}: {d.reason}")

    def _add_ids(self, events: Sequence[InboxEvent], result: BatchResult) -> None:
        room = MAX_RECORDED_IDS - len(self.event_ids)
        if room > 0 and result.inserted_ids:
            inserted = set(result.inserted_ids[:room])
            for e in events:
                if e.event_id in inserted and len(self.event_ids) < MAX_RECORDED_IDS:
                    inserted.discard(e.event_id)
                    self.event_ids.append(e.event_id)
                    self.events.append(
                        {
                            "event_id": e.event_id,
                            "subject": e.subject,
                            "correlation_id": e.correlation_id,
                        }
                    )
        seen = set(self.correlation_ids)
        for e in events:
            if len(self.correlation_ids) >= MAX_RECORDED_IDS:
                break
            if e.correlation_id not in seen:
                seen.add(e.correlation_id)
                self.correlation_ids.append(e.correlation_id)


__all__ = ["MAX_RECORDED_IDS", "Checked", "InboxRecord", "validate_batch"]
