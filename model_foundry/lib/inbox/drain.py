"""Draining one subject's durable consumer into the DuckDB inbox.

The one code path behind the ``pipeline_event_inbox_record`` asset, ``make demo`` and
``model-foundry bench ingest``. Per batch: fetch from the durable pull consumer, validate,
write inbox rows and dead letters in one DuckDB transaction, and only then acknowledge
(``ack`` for stored and duplicate events, ``term`` for dead letters). A process killed at
any point therefore leaves each message either unacknowledged (JetStream redelivers it) or
committed (the ``event_id`` key turns the redelivery into a counted duplicate).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import nats.errors
from nats.aio.msg import Msg
from nats.js.errors import ServiceUnavailableError

from model_foundry.lib import settings
from model_foundry.lib.events import DeadLetter, InboxEvent, reason_class, validate_message
from model_foundry.lib.inbox.store import INBOX_SCHEMA, BatchResult, write_batch
from model_foundry.lib.nats.resource import NatsResource, NatsUnavailableError, consumer_name
from model_foundry.lib.storage import BatchWriter, backoff_delays
from model_foundry.lib.telemetry import Telemetry

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 1000
# DuckDB memory for the drain's writer: inserts need little, and a cap keeps the drain's
# footprint flat however large the inbox table has grown (bench ingest checks this).
DEFAULT_MEMORY_LIMIT = settings.ingest_memory_limit()
# Metadata and the returned record keep at most this many ids, so a drain of a million events
# stays small in the Dagster event log.
MAX_RECORDED_IDS = 1000
# How long a drain holding the DuckDB file waits for the next fetch before it lets the file
# go: a fetch from a backlog is back in milliseconds, one from an empty queue long-polls.
LONG_POLL_GRACE_S = 0.1


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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def _add(
        self,
        msgs: Sequence[Msg],
        events: Sequence[InboxEvent],
        dead: Sequence[DeadLetter],
        result: BatchResult,
    ) -> None:
        self.batches += 1
        self.received += len(msgs)
        self.inserted += len(result.inserted_ids)
        self.duplicates += result.duplicates
        self.conflicts += result.conflicts
        self.dead_lettered += result.dead_lettered
        seqs = [e.stream_seq for e in events] + [d.stream_seq for d in dead]
        if seqs:
            low, high = min(seqs), max(seqs)
            self.first_stream_seq = (
                low if self.first_stream_seq is None else min(low, self.first_stream_seq)
            )
            self.last_stream_seq = (
                high if self.last_stream_seq is None else max(high, self.last_stream_seq)
            )
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


def _validate_batch(
    msgs: Sequence[Msg],
) -> tuple[list[InboxEvent], list[DeadLetter], list[Msg], list[Msg]]:
    received_at = datetime.now(UTC)
    events: list[InboxEvent] = []
    dead: list[DeadLetter] = []
    keep: list[Msg] = []
    reject: list[Msg] = []
    for msg in msgs:
        # Msg.metadata parses the reply subject on every access; read it once per message.
        checked = validate_message(msg.subject, msg.data, _stream_seq(msg), received_at)
        if isinstance(checked, InboxEvent):
            events.append(checked)
            keep.append(msg)
        else:
            dead.append(checked)
            reject.append(msg)
    return events, dead, keep, reject


def _stream_seq(msg: Msg) -> int:
    return msg.metadata.sequence.stream


# The commit runs in a thread while the event loop fetches the next batch. DuckDB releases the
# GIL while it works, but with CPython's default 5 ms switch interval the committing thread
# then waits for the GIL behind the busy event loop: measured with `bench ingest`, a 0.5 ms
# interval made the drain about 20% faster on 2 cores. Set only while a drain runs.
DRAIN_SWITCH_INTERVAL_S = 0.0005


@contextlib.asynccontextmanager
async def _short_gil_switch_interval() -> AsyncIterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(previous, DRAIN_SWITCH_INTERVAL_S))
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


_CONNECTION_LOST = (
    ConnectionError,
    nats.errors.ConnectionClosedError,
    nats.errors.StaleConnectionError,
    nats.errors.NoServersError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.OutboundBufferLimitError,
    nats.errors.FlushTimeoutError,
    ServiceUnavailableError,
)


async def _fetch(sub: Any, batch: int, timeout: float, unavailable_s: float = 15.0) -> list[Msg]:
    delays = backoff_delays(first=0.2, cap=2.0)
    deadline = time.monotonic() + unavailable_s
    while True:
        try:
            return await sub.fetch(batch, timeout=timeout)
        except (nats.errors.TimeoutError, TimeoutError):
            # nats-py raises either, depending on where in the pull the deadline passed.
            return []
        except (ServiceUnavailableError, nats.errors.ConnectionReconnectingError):
            # A server that just restarted answers 503 until JetStream has recovered its
            # streams; back off and pull again rather than failing the run.
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(next(delays))


@dataclass
class _DrainTelemetry:
    """Per-session and per-reason counts of one drain, for its telemetry events."""

    telemetry: Telemetry
    sessions: Counter[str] = field(default_factory=Counter)
    dead_classes: Counter[str] = field(default_factory=Counter)

    def add(self, events: Sequence[InboxEvent], dead: Sequence[DeadLetter], result: Any) -> None:
        if not self.telemetry.enabled:
            return
        inserted = set(result.inserted_ids)
        for e in events:
            if e.event_id in inserted:
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


@_short_gil_switch_interval()
async def drain_subject(
    nats_resource: NatsResource,
    db_path: str | Path,
    subject: str,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_events: int | None = None,
    fetch_timeout_s: float = 1.0,
    after_commit: Callable[[Sequence[Msg]], None] | None = None,
    progress: Callable[[InboxRecord], None] | None = None,
    memory_limit: str | None = DEFAULT_MEMORY_LIMIT,
    telemetry: Telemetry | None = None,
) -> InboxRecord:
    """Drain ``subject``'s consumer until it is empty or ``max_events`` were received.

    ``after_commit`` runs between the DuckDB commit and the acks; the crash tests use it to
    kill the process at exactly that point. ``telemetry`` gets one ``model_foundry.inbox_drain``
    event and one ``model_foundry.inbox_session`` per session that got events.
    """
    started = time.perf_counter()
    record = InboxRecord(subject=subject)
    counts = _DrainTelemetry(telemetry or Telemetry.disabled())
    nc = await nats_resource.connect()
    try:
        js = nc.jetstream()
        await nats_resource.ensure_stream(js)
        sub = await js.pull_subscribe_bind(consumer_name(subject), stream=nats_resource.stream)

        def want(already: int) -> int:
            if max_events is None:
                return batch_size
            return max(0, min(batch_size, max_events - already))

        next_fetch: asyncio.Task[list[Msg]] | None = (
            asyncio.create_task(_fetch(sub, want(0), fetch_timeout_s)) if want(0) else None
        )
        writer = BatchWriter(db_path, schema=INBOX_SCHEMA, memory_limit=memory_limit)
        asked = want(0)
        backlog_ended = False
        try:
            while next_fetch is not None:
                if backlog_ended:
                    # The last fetch came back short, so this one may long-poll an empty
                    # queue: let other writers and readers have the file meanwhile.
                    await asyncio.to_thread(writer.release)
                elif not next_fetch.done():
                    # A full batch does not prove more are waiting (a backlog that is an exact
                    # multiple of the batch size ends on one): a fetch not back promptly is
                    # long-polling, and the file must not stay locked across that wait.
                    await asyncio.wait({next_fetch}, timeout=LONG_POLL_GRACE_S)
                    if not next_fetch.done():
                        await asyncio.to_thread(writer.release)
                msgs = await next_fetch
                next_fetch = None
                if not msgs:
                    break
                backlog_ended = len(msgs) < asked
                events, dead, keep, reject = _validate_batch(msgs)
                fetched = record.received + len(msgs)
                # Fetch the next batch while this one commits: the network wait and the DuckDB
                # write overlap, and the next batch is only acknowledged after its own commit.
                asked = want(fetched)
                if asked:
                    next_fetch = asyncio.create_task(_fetch(sub, asked, fetch_timeout_s))
                result = await asyncio.to_thread(
                    writer.write,
                    partial(write_batch, stream=nats_resource.stream, events=events, dead=dead),
                )
                if after_commit is not None:
                    after_commit(msgs)
                for msg in keep:
                    await msg.ack()
                for msg in reject:
                    await msg.term()
                await nc.flush()
                writer.release_if_held_too_long()
                record._add(msgs, events, dead, result)
                counts.add(events, dead, result)
                for d in dead:
                    if len(record.dead_letter_reasons) < MAX_RECORDED_IDS:
                        record.dead_letter_reasons.append(f"seq {d.stream_seq}: {d.reason}")
                if progress is not None:
                    progress(record)
            if max_events is not None and record.received >= max_events:
                info = await nats_resource.pending(js, subject)
                record.capped = info.num_pending > 0
        finally:
            await asyncio.to_thread(writer.release)
            if next_fetch is not None:
                next_fetch.cancel()
                # Whatever it fetched stays unacknowledged and is redelivered after ack_wait.
                await asyncio.gather(next_fetch, return_exceptions=True)
    except _CONNECTION_LOST as exc:
        record.seconds = round(time.perf_counter() - started, 3)
        counts.emit(record, "failed")
        # What is committed is safe and what is not is unacknowledged and comes back, so a
        # lost server is a retryable condition, not a bug: one sentence, no stack trace.
        raise NatsUnavailableError(
            f"lost NATS at {nats_resource.redacted_servers} while draining {subject} after "
            f"{record.received} messages ({type(exc).__name__}); committed batches are "
            "kept and the rest is redelivered to the next run"
        ) from None
    finally:
        with contextlib.suppress(Exception):
            await nc.close()
    record.seconds = round(time.perf_counter() - started, 3)
    counts.emit(record, "ok")
    return record


__all__ = ["DEFAULT_BATCH_SIZE", "MAX_RECORDED_IDS", "InboxRecord", "drain_subject"]
