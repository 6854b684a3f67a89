"""Draining one subject's consumers into the DuckDB inbox.

The one code path behind the ``pipeline_event_inbox_record`` asset, ``make demo`` and
``model-foundry bench ingest``. A subject's partition has one consumer, or two on a NATS
server without ``filter_subjects`` (its own name and its legacy name; see
``lib/nats/consumers.py``); the drain empties each in turn. Per batch: fetch, validate,
write inbox rows and dead letters in one DuckDB transaction, and only then acknowledge
(``+ACK`` for stored and duplicate events, ``+TERM`` for dead letters). A process killed at
any point therefore leaves each message either unacknowledged (JetStream redelivers it) or
committed (the store turns the redelivery into a counted duplicate).

JetStream never stops redelivering. A batch whose commit fails is left unacknowledged and
the error is raised; once a message of a failing batch has been delivered ``max_deliver``
times, the batch is written around it and it is stored alone or, failing that, kept as a
dead letter with the error as the reason. If even that write fails (a full disk) it stays
in the queue. So no message leaves the queue without being in the inbox or the dead-letter
table, whichever way its delivery ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import sys
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js.errors import ServiceUnavailableError

from model_foundry.lib import settings
from model_foundry.lib.events import DeadLetter, InboxEvent, reason_class, validate_message
from model_foundry.lib.inbox.store import (
    BatchResult,
    StagedBatch,
    stage_batch,
    write_batch,
    write_staged,
)
from model_foundry.lib.nats.connection import NatsClient, NatsUnavailableError
from model_foundry.lib.nats.pull import NoResponders, Puller, delivery
from model_foundry.lib.storage import BatchWriter, DuckDBBusyError, backoff_delays
from model_foundry.lib.telemetry import Telemetry

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 1000
# DuckDB memory for the drain's writer: inserts need little, and a cap keeps the drain's
# footprint flat however large the inbox table has grown (bench ingest checks this).
DEFAULT_MEMORY_LIMIT = settings.ingest_memory_limit()
# DuckDB threads of the drain's writer. A batch's statements touch a few thousand rows, too
# few to gain from parallel execution, and on a small machine a second DuckDB worker only
# competes with the event loop that fetches and validates the next batch.
WRITER_THREADS = 1
# Validated batches a consumer's drain may hold for the writer, the one committing included.
# Commits still run one at a time and in order; the depth lets the event loop go on
# fetching and validating while a commit is slow, which it is whenever DuckDB checkpoints
# inside it (every 16 MB of write-ahead log: about 0.15 s, once per 15 batches of the 1 KB
# sample events). With one batch in hand the loop waited on those commits for a third of a
# drain (bench ingest).
COMMIT_DEPTH = 4
# Metadata and the returned record keep at most this many ids, so a drain of a million events
# stays small in the Dagster event log.
MAX_RECORDED_IDS = 1000
# How long a drain holding the DuckDB file waits for the next fetch before it lets the file
# go: a fetch from a backlog is back in milliseconds, one from an empty queue long-polls.
LONG_POLL_GRACE_S = 0.1
# How much of a storage error the reason of a dead letter keeps.
MAX_ERROR_CHARS = 300


@dataclass(slots=True)
class Checked:
    """One fetched message and what the contract made of it."""

    msg: Msg
    item: InboxEvent | DeadLetter
    deliveries: int


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

    def _add(self, checked: Sequence[Checked], result: BatchResult, dead: Sequence[Any]) -> None:
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


def _validate_batch(msgs: Sequence[Msg]) -> list[Checked]:
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
class Committed:
    """What a batch's commit stored, and how each message is to be answered."""

    result: BatchResult = field(default_factory=BatchResult)
    dead: list[DeadLetter] = field(default_factory=list)
    ack: list[Msg] = field(default_factory=list)
    term: list[Msg] = field(default_factory=list)
    # Neither stored nor dead-lettered: left unacknowledged, redelivered after ack_wait.
    unstored: list[Msg] = field(default_factory=list)
    error: BaseException | None = None


@dataclass
class Prepared:
    """A validated batch staged for its transaction, and how each message is answered once
    it is committed: ``+ACK`` for events, ``+TERM`` for dead letters."""

    checked: Sequence[Checked]
    batch: StagedBatch
    ack: list[Msg]
    term: list[Msg]


def _prepare(checked: Sequence[Checked]) -> Prepared:
    events: list[InboxEvent] = []
    dead: list[DeadLetter] = []
    ack: list[Msg] = []
    term: list[Msg] = []
    for c in checked:
        if isinstance(c.item, InboxEvent):
            events.append(c.item)
            ack.append(c.msg)
        else:
            dead.append(c.item)
            term.append(c.msg)
    return Prepared(checked, stage_batch(events, dead), ack, term)


def _write(writer: BatchWriter, stream: str, prepared: Prepared) -> Committed:
    """One transaction for a prepared batch: events to the inbox, contract breaks to dead
    letters."""
    result = writer.write(partial(write_staged, stream=stream, batch=prepared.batch))
    return Committed(
        result=result, dead=list(prepared.batch.dead), ack=prepared.ack, term=prepared.term
    )


def _merge(into: Committed, part: Committed) -> None:
    into.result.add(part.result)
    into.dead += part.dead
    into.ack += part.ack
    into.term += part.term
    into.unstored += part.unstored


def _undeliverable(c: Checked, error: BaseException) -> DeadLetter:
    text = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error) else ''}"
    reason = f"not stored after {c.deliveries} deliveries: {text}"[:MAX_ERROR_CHARS]
    if isinstance(c.item, DeadLetter):
        return dataclasses.replace(c.item, reason=f"{c.item.reason}; {reason}"[:MAX_ERROR_CHARS])
    e = c.item
    return DeadLetter(
        subject=e.subject,
        source_subject=e.source_subject,
        stream_seq=e.stream_seq,
        received_at=e.received_at,
        reason=reason,
        raw=e.raw,
        event_id=e.event_id,
        published_at=e.published_at,
    )


def _write_around(
    writer: BatchWriter, stream: str, checked: Sequence[Checked], budget: int, error: Exception
) -> Committed:
    """A batch that failed with ``error``: each message delivered ``budget`` times is stored
    alone, or else dead-lettered with its own error; then the rest is tried once more."""
    done = Committed()
    for c in (c for c in checked if c.deliveries >= budget):
        try:
            _merge(done, _write(writer, stream, _prepare([c])))
            continue
        except DuckDBBusyError:
            raise
        except Exception as own:  # any failure of its own write
            letter = _undeliverable(c, own)
        try:
            result = writer.write(partial(write_batch, stream=stream, events=[], dead=[letter]))
        except DuckDBBusyError:
            raise
        except Exception:  # even its dead letter cannot be written
            done.unstored.append(c.msg)
            continue
        _merge(done, Committed(result=result, dead=[letter], term=[c.msg]))
    rest = [c for c in checked if c.deliveries < budget]
    if rest:
        try:
            _merge(done, _write(writer, stream, _prepare(rest)))
        except DuckDBBusyError:
            raise
        except Exception:  # the rest keeps failing: raise the first error
            done.unstored += [c.msg for c in rest]
            done.error = error
    if done.unstored and done.error is None:
        done.error = error
    return done


def _then_release_if_held_too_long(writer: BatchWriter, work: Callable[[], Committed]) -> Committed:
    """``work``, then let the file go if this writer has held it for too long. Closing
    checkpoints DuckDB's write-ahead log (tens of milliseconds per second of drained events),
    so it runs here, in the writer's thread, while the event loop validates the next batch."""
    committed = work()
    writer.release_if_held_too_long()
    return committed


def _commit(writer: BatchWriter, stream: str, prepared: Prepared, budget: int) -> Committed:
    """One batch's commit, in the writer's thread; a batch that fails after its messages'
    delivery budget is written around (:func:`_write_around`)."""
    checked = prepared.checked
    try:
        return _then_release_if_held_too_long(writer, partial(_write, writer, stream, prepared))
    except DuckDBBusyError:
        # The file is busy, not the messages: they all stay for the next run.
        raise
    except Exception as error:
        if not any(c.deliveries >= budget for c in checked):
            raise
        log.warning("batch failed (%s); writing its messages one by one", error)
        return _then_release_if_held_too_long(
            writer, partial(_write_around, writer, stream, checked, budget, error)
        )


class _EarlierBatchNotCommitted(Exception):
    """A batch queued behind one whose commit failed: it is not written, so nothing is
    committed after a failed batch, and its messages are redelivered after ack_wait."""


class _Writes:
    """The writer's own thread: it runs a drain's commits one at a time, in the order they
    were queued, and starts each as soon as the one before it returned, without waiting for
    the event loop (which may be validating a batch for 15 ms between two awaits). Once a
    commit fails, none queued after it is written."""

    def __init__(self, writer: BatchWriter) -> None:
        self.writer = writer
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inbox-writer")
        self._failed = False

    def commit(self, stream: str, prepared: Prepared, budget: int) -> asyncio.Future[Committed]:
        return asyncio.wrap_future(self._thread.submit(self._commit, stream, prepared, budget))

    def _commit(self, stream: str, prepared: Prepared, budget: int) -> Committed:
        if self._failed:
            raise _EarlierBatchNotCommitted
        try:
            committed = _commit(self.writer, stream, prepared, budget)
        except BaseException:
            self._failed = True
            raise
        if committed.error is not None:
            self._failed = True
        return committed

    async def release(self) -> None:
        """Let the file go, after every commit queued before."""
        await asyncio.wrap_future(self._thread.submit(self.writer.release))

    def close(self) -> None:
        self._thread.shutdown(wait=False)


# The commit runs in a thread while the event loop fetches and validates the next batch.
# DuckDB releases the GIL while it works, but with CPython's default 5 ms switch interval the
# committing thread then waits for the GIL behind the busy event loop: measured with `bench
# ingest`, a 0.5 ms interval made the drain about 20% faster on 2 cores, and 0.1 ms another
# 6% once the writer's thread ran its queue of commits on its own (each DuckDB call hands
# the GIL back and forth). Set only while a drain runs.
DRAIN_SWITCH_INTERVAL_S = 0.0001


@contextlib.asynccontextmanager
async def _short_gil_switch_interval() -> AsyncIterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(previous, DRAIN_SWITCH_INTERVAL_S))
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


# Python's full (oldest-generation) garbage collection walks every tracked object: in a
# process that has imported Dagster that is ~170k objects before a single event, and a drain
# allocates enough to trigger one every ~25k events. Measured with `bench ingest`-sized
# drains, those collections took 7% of a 100k-event drain. Freezing the heap as it is when
# the drain starts leaves those objects out of every collection (the drain's own garbage is
# still collected); unfreezing at the end hands them back to the oldest generation. A
# process that froze its heap itself (a pre-forking server) is left as it is.
@contextlib.asynccontextmanager
async def _collect_only_the_drains_garbage() -> AsyncIterator[None]:
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


_CONNECTION_LOST = (
    ConnectionError,
    nats.errors.ConnectionClosedError,
    nats.errors.StaleConnectionError,
    nats.errors.NoServersError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.OutboundBufferLimitError,
    nats.errors.FlushTimeoutError,
    ServiceUnavailableError,
    NoResponders,
)


async def _fetch(
    puller: Puller, batch: int, timeout: float, unavailable_s: float = 15.0
) -> list[Msg]:
    delays = backoff_delays(first=0.2, cap=2.0)
    deadline = time.monotonic() + unavailable_s
    while True:
        try:
            return await puller.fetch(batch, timeout)
        except (NoResponders, nats.errors.ConnectionReconnectingError):
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


@dataclass
class _Drain:
    """One drain's shared state: the connection, the writer and the limits."""

    nc: NATS
    stream: str
    writes: _Writes
    record: InboxRecord
    batch_size: int
    max_events: int | None
    fetch_timeout_s: float
    budget: int
    after_commit: Callable[[Sequence[Msg]], None] | None
    progress: Callable[[InboxRecord], None] | None
    counts: _DrainTelemetry | None = None

    def want(self, received: int) -> int:
        """The next fetch's size once ``received`` messages are in hand."""
        if self.max_events is None:
            return self.batch_size
        return max(0, min(self.batch_size, self.max_events - received))

    async def answer(self, committed: Committed) -> None:
        publish = self.nc.publish
        for msg in committed.ack:
            await publish(msg.reply, b"+ACK")
        for msg in committed.term:
            await publish(msg.reply, b"+TERM")


@dataclass
class _Flight:
    """A validated batch whose commit is running, or waiting for the one before it, in the
    writer's thread."""

    msgs: list[Msg]
    checked: list[Checked]
    commit: asyncio.Future[Committed]


async def _land(drain: _Drain, flight: _Flight) -> None:
    """Wait for ``flight``'s commit, then acknowledge it and count it; a failed commit's
    messages stay unacknowledged and its error is raised."""
    committed = await flight.commit
    if drain.after_commit is not None:
        drain.after_commit(flight.msgs)
    await drain.answer(committed)
    drain.record._add(flight.checked, committed.result, committed.dead)
    if drain.counts is not None:
        drain.counts.add(flight.checked, committed.dead, committed.result)
    if committed.error is not None:
        raise committed.error
    if drain.progress is not None:
        drain.progress(drain.record)


async def _drain_consumer(drain: _Drain, consumer: str) -> None:
    """Empty one consumer (or stop at ``max_events``), batch by batch.

    Batches move through a short pipeline: up to :data:`COMMIT_DEPTH` validated batches
    committing or queued for the writer's thread, the next being fetched and then validated
    on the event loop meanwhile, and the fetch after it already asked for. Commits run one
    at a time and in order (so each batch's duplicate check sees every earlier batch), a
    batch is acknowledged only after its own commit returned, and batches are acknowledged
    in the order they were fetched. Once a commit fails, none after it is written.
    """
    puller = await Puller(drain.nc, drain.stream, consumer).start()
    # Messages fetched so far, committed or not: what max_events counts against.
    fetched = drain.record.received
    asked = drain.want(fetched)
    next_fetch = (
        asyncio.create_task(_fetch(puller, asked, drain.fetch_timeout_s)) if asked else None
    )
    flights: deque[_Flight] = deque()
    backlog_ended = False
    try:
        while next_fetch is not None or flights:
            if flights and (next_fetch is None or flights[0].commit.done()):
                await _land(drain, flights.popleft())
                continue
            assert next_fetch is not None
            if not flights:
                if backlog_ended:
                    # The last fetch came back short, so this one may long-poll an empty
                    # queue: let other writers and readers have the file meanwhile.
                    await drain.writes.release()
                elif not next_fetch.done():
                    # A full batch does not prove more are waiting (a backlog that is an
                    # exact multiple of the batch size ends on one): a fetch not back
                    # promptly is long-polling, and the file must not stay locked across
                    # that wait.
                    await asyncio.wait({next_fetch}, timeout=LONG_POLL_GRACE_S)
                    if not next_fetch.done():
                        await drain.writes.release()
            else:
                # Whichever comes first: a commit that ends is acknowledged at once, and
                # the writer's file is only released once no commit is running.
                await asyncio.wait(
                    {next_fetch, flights[0].commit}, return_when=asyncio.FIRST_COMPLETED
                )
                if not next_fetch.done():
                    continue
            try:
                msgs = await next_fetch
            finally:
                next_fetch = None
            if not msgs:
                continue  # the consumer is empty: land the batches in hand, then stop
            backlog_ended = len(msgs) < asked
            # Validated and staged while earlier batches commit in the writer's thread.
            checked = _validate_batch(msgs)
            prepared = _prepare(checked)
            fetched += len(msgs)
            asked = drain.want(fetched)
            if asked:
                next_fetch = asyncio.create_task(_fetch(puller, asked, drain.fetch_timeout_s))
            while len(flights) >= COMMIT_DEPTH:
                await _land(drain, flights.popleft())
            flights.append(
                _Flight(msgs, checked, drain.writes.commit(drain.stream, prepared, drain.budget))
            )
    finally:
        if flights:
            # A fetch, a commit or an acknowledgement failed, or the drain was cancelled,
            # while batches were in hand: the commits not yet started are dropped, and one
            # running finishes in the writer's thread, which also runs the release after it.
            # Their messages stay unacknowledged and are redelivered after ack_wait; those
            # committed come back as duplicates.
            for f in flights:
                f.commit.cancel()
            await asyncio.gather(*(f.commit for f in flights), return_exceptions=True)
        if next_fetch is not None:
            next_fetch.cancel()
            # Whatever it fetched stays unacknowledged and is redelivered after ack_wait.
            await asyncio.gather(next_fetch, return_exceptions=True)
        await puller.close()
    # Once per consumer, not per batch: a flush waits for the server's answer.
    await drain.nc.flush()


@_short_gil_switch_interval()
@_collect_only_the_drains_garbage()
async def drain_subject(
    nats_resource: NatsClient,
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
    """Drain ``subject``'s consumers until they are empty or ``max_events`` were received.

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
        await nats_resource.ensure_stream(js, subjects=())
        partition = await nats_resource.partition(js, subject)
        record.consumers = list(partition.names)
        writes = _Writes(BatchWriter(db_path, memory_limit=memory_limit, threads=WRITER_THREADS))
        drain = _Drain(
            nc=nc,
            stream=nats_resource.stream,
            writes=writes,
            record=record,
            batch_size=batch_size,
            max_events=max_events,
            fetch_timeout_s=fetch_timeout_s,
            budget=nats_resource.max_deliver,
            after_commit=after_commit,
            progress=progress,
            counts=counts,
        )
        try:
            for consumer in partition.names:
                if drain.want(record.received) == 0:
                    break
                await _drain_consumer(drain, consumer)
            if max_events is not None and record.received >= max_events:
                info = await nats_resource.pending(js, subject)
                record.capped = info.num_pending > 0
        finally:
            try:
                await writes.release()
            finally:
                # Even when the release failed: the writer's thread must not outlive the drain.
                writes.close()
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


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "MAX_RECORDED_IDS",
    "Checked",
    "Committed",
    "InboxRecord",
    "drain_subject",
]
