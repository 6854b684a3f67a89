"""The fetch loop: a subject's consumers drained batch by batch, the commits and their
acknowledgements kept in order (see the package's docstring)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js.errors import ServiceUnavailableError

from model_foundry.lib import settings
from model_foundry.lib.inbox.drain.commit import Committed, ready_batch
from model_foundry.lib.inbox.drain.record import Checked, InboxRecord, validate_batch
from model_foundry.lib.inbox.drain.telemetry import DrainTelemetry
from model_foundry.lib.inbox.drain.tuning import (
    collect_only_the_drains_garbage,
    short_gil_switch_interval,
)
from model_foundry.lib.inbox.drain.writer import WRITER_THREADS, WriterThread
from model_foundry.lib.nats.connection import NatsClient, NatsUnavailableError
from model_foundry.lib.nats.pull import NoResponders, Puller
from model_foundry.lib.nats.wire import ACK, TERM
from model_foundry.lib.storage import BatchWriter, backoff_delays
from model_foundry.lib.telemetry import Telemetry

DEFAULT_BATCH_SIZE = 1000
# DuckDB memory for the drain's writer: inserts need little, and a cap keeps the drain's
# footprint flat however large the inbox table has grown (bench ingest checks this).
DEFAULT_MEMORY_LIMIT = settings.ingest_memory_limit()
# Validated batches a consumer's drain may hold for the writer, the one committing included.
# Commits still run one at a time and in order; the depth lets the event loop go on
# fetching and validating while a commit is slow, which it is whenever DuckDB checkpoints
# its write-ahead log inside it. With one batch in hand the loop spent much of a drain
# waiting on those commits (bench ingest).
COMMIT_DEPTH = 4
# How long a drain holding the DuckDB file waits for the next fetch before it lets the file
# go: a fetch from a backlog is back in milliseconds, one from an empty queue long-polls.
LONG_POLL_GRACE_S = 0.1


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
class _Drain:
    """One drain's shared state: the connection, the writer and the limits."""

    nc: NATS
    stream: str
    writes: WriterThread
    record: InboxRecord
    batch_size: int
    max_events: int | None
    fetch_timeout_s: float
    budget: int
    after_commit: Callable[[Sequence[Msg]], None] | None
    progress: Callable[[InboxRecord], None] | None
    counts: DrainTelemetry | None = None

    def want(self, received: int) -> int:
        """The next fetch's size once ``received`` messages are in hand."""
        if self.max_events is None:
            return self.batch_size
        return max(0, min(self.batch_size, self.max_events - received))

    async def answer(self, committed: Committed) -> None:
        publish = self.nc.publish
        for msg in committed.ack:
            await publish(msg.reply, ACK)
        for msg in committed.term:
            await publish(msg.reply, TERM)


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
    drain.record.add_batch(flight.checked, committed.result, committed.dead)
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
            checked = validate_batch(msgs)
            ready = ready_batch(checked)
            fetched += len(msgs)
            asked = drain.want(fetched)
            if asked:
                next_fetch = asyncio.create_task(_fetch(puller, asked, drain.fetch_timeout_s))
            while len(flights) >= COMMIT_DEPTH:
                await _land(drain, flights.popleft())
            flights.append(
                _Flight(msgs, checked, drain.writes.commit(drain.stream, ready, drain.budget))
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


@short_gil_switch_interval()
@collect_only_the_drains_garbage()
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
    counts = DrainTelemetry(telemetry or Telemetry.disabled())
    nc = await nats_resource.connect()
    try:
        js = nc.jetstream()
        await nats_resource.ensure_stream(js, subjects=())
        partition = await nats_resource.partition(js, subject)
        record.consumers = list(partition.names)
        writes = WriterThread(
            BatchWriter(
                db_path, memory_limit=memory_limit, threads=WRITER_THREADS, defer_merges=True
            )
        )
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


__all__ = ["COMMIT_DEPTH", "DEFAULT_BATCH_SIZE", "DEFAULT_MEMORY_LIMIT", "drain_subject"]
