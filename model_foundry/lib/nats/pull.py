"""Pulling from a JetStream consumer with one callback subscription and the pull-request API.

nats-py's ``PullSubscription.fetch`` waits for each message with ``asyncio.wait_for`` on a new
task (nats-py 2.16, ``nats/aio/subscription.py``, ``Subscription.next_msg``): about 40 us of
client CPU per message on the development machine, several times what parsing the message
costs. The drain therefore speaks JetStream's pull protocol itself: it publishes a request
to ``$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`` with a reply inbox, and a callback
subscription on that inbox collects the messages. Status messages (``404 No Messages``,
``408 Request Timeout``, ``409`` ...) end a request, as in the NATS ADR-13 pull protocol.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from model_foundry.lib.nats.wire import (
    ACK_SUBJECT_FIRST,
    ACK_SUBJECT_SECOND,
    DESCRIPTION_HEADER,
    STATUS_HEADER,
    STATUS_IDLE_HEARTBEAT,
    STATUS_NO_MESSAGES,
    STATUS_NO_RESPONDERS,
    STATUS_REQUEST_TIMEOUT,
    pull_next_subject,
)

# How long a long-poll that has delivered some messages may wait for more before the
# fetch returns what it has: the drain then commits them while the request stays open.
LINGER_S = 0.02
# A healthy server answers a no_wait request at once; this only bounds a server that hangs.
NO_WAIT_ANSWER_S = 5.0


@dataclass(slots=True)
class Delivery:
    """What a delivered message's ack subject says about it."""

    stream_seq: int
    # How many times JetStream has delivered it, this time included.
    deliveries: int
    # When the stream stored it: the same on every redelivery.
    published_at: datetime


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def delivery(msg: Msg) -> Delivery:
    """Parse ``msg``'s ack subject (``$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.
    <consumer seq>.<ns>.<pending>``, or the form with domain and account hash before the
    stream) in a third of the time ``Msg.metadata`` takes, to the microsecond."""
    tokens = (msg.reply or "").split(".")
    n = len(tokens)
    # Once per message on the drain's event loop: no slices or lists to compare, and the
    # time built from whole seconds and microseconds (timedelta's positional form is the
    # cheapest way to an exact datetime; a float timestamp can be off by a microsecond).
    if (
        (n == 9 or n == 11 or n == 12)
        and tokens[0] == ACK_SUBJECT_FIRST
        and tokens[1] == ACK_SUBJECT_SECOND
    ):
        at = 4 if n == 9 else 6
        seconds, micros = divmod(int(tokens[at + 3]) // 1000, 1_000_000)
        published_at = _EPOCH + timedelta(0, seconds, micros)
        return Delivery(int(tokens[at + 1]), int(tokens[at]), published_at)
    meta = msg.metadata  # raises NotJSMessageError for anything else
    return Delivery(meta.sequence.stream, meta.num_delivered, meta.timestamp)


class PullError(RuntimeError):
    """The server ended a pull request with an error status (e.g. the consumer was deleted)."""


class NoResponders(PullError):
    """Nothing answered the pull request (JetStream unavailable, or restarting)."""


class Puller:
    """One consumer's messages, fetched in batches through one reply inbox.

    At most one pull request is open at a time, and a request never asks for more than the
    caller still wants, so nothing is delivered that the caller did not ask for. Messages
    that arrive after a fetch returned stay in the buffer for the next fetch.
    """

    def __init__(self, nc: NATS, stream: str, consumer: str) -> None:
        self._nc = nc
        self._api = pull_next_subject(stream, consumer)
        self._inbox = nc.new_inbox()
        self._buffer: deque[Msg] = deque()
        self._open = False  # a request is outstanding on the server
        self._polling = False  # ... and it is a long-poll, not a no_wait request
        self._credit = 0  # messages the open request may still deliver
        self._error: PullError | None = None
        self._want = 0  # the batch the current fetch waits for
        self._changed = asyncio.Event()
        self._sub: Subscription | None = None

    async def start(self) -> Puller:
        self._sub = await self._nc.subscribe(self._inbox, cb=self._on_message)
        return self

    async def close(self) -> None:
        if self._sub is not None:
            sub, self._sub = self._sub, None
            await sub.unsubscribe()

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    async def _on_message(self, msg: Msg) -> None:
        # Every message JetStream delivers carries an ack subject as its reply; the status
        # messages that end a request carry none (a publisher's own "Status" header on an
        # event must not end a request and strand the event unacknowledged).
        headers = msg.headers
        status = headers.get(STATUS_HEADER) if headers and not msg.reply else None
        if status is None:
            self._buffer.append(msg)
            self._credit -= 1
            if self._credit <= 0:
                self._open = False
            # Wake the fetch only when it has something to decide: waking it per message
            # would cost the very per-message task switch this class exists to avoid.
            if (
                self._open
                and len(self._buffer) < self._want
                and not (self._polling and len(self._buffer) == 1)
            ):
                return
        elif status == STATUS_IDLE_HEARTBEAT:
            return  # idle heartbeat
        else:
            self._open = False
            self._credit = 0
            if status == STATUS_NO_RESPONDERS:
                self._error = NoResponders("JetStream did not answer the pull request (503)")
            elif status not in (STATUS_NO_MESSAGES, STATUS_REQUEST_TIMEOUT):
                description = headers.get(DESCRIPTION_HEADER, "")
                self._error = PullError(f"pull request ended with {status} {description}".strip())
        self._changed.set()

    async def _request(self, batch: int, *, expires_s: float | None) -> None:
        body: dict[str, object] = {"batch": batch}
        if expires_s is None:
            body["no_wait"] = True
        else:
            body["expires"] = int(expires_s * 1_000_000_000)
        self._open = True
        self._polling = expires_s is not None
        self._credit = batch
        await self._nc.publish(self._api, json.dumps(body).encode(), reply=self._inbox)

    async def _wait(self, batch: int, deadline: float, *, linger: bool) -> None:
        """Until the buffer holds ``batch`` or the open request ended; with ``linger``, also
        once the first message of a long-poll has waited :data:`LINGER_S` for company."""
        first_seen: float | None = None
        while self._open and len(self._buffer) < batch:
            now = time.monotonic()
            if linger and self._buffer and first_seen is None:
                first_seen = now
            limit = deadline if first_seen is None else min(deadline, first_seen + LINGER_S)
            if now >= limit:
                return
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), limit - now)
            except TimeoutError:
                return

    def _take(self, batch: int) -> list[Msg]:
        n = min(batch, len(self._buffer))
        return [self._buffer.popleft() for _ in range(n)]

    def _raise_pending_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    async def fetch(self, batch: int, timeout: float) -> list[Msg]:
        """Up to ``batch`` messages; an empty list once the consumer had none for ``timeout``.

        A backlog is fetched with ``no_wait`` requests that the server answers at once; only
        an empty consumer gets a long-poll of ``timeout`` seconds.
        """
        self._want = batch
        if len(self._buffer) >= batch:
            return self._take(batch)
        if not self._open:
            await self._request(batch - len(self._buffer), expires_s=None)
        wait_s = timeout + 1.0 if self._polling else max(timeout, NO_WAIT_ANSWER_S)
        await self._wait(batch, time.monotonic() + wait_s, linger=self._polling)
        if self._buffer:
            return self._take(batch)
        self._raise_pending_error()
        if self._open:
            return []  # the server did not answer in time; the request may still deliver
        # Nothing was available: wait for new messages for up to `timeout`.
        await self._request(batch, expires_s=timeout)
        await self._wait(batch, time.monotonic() + timeout + 1.0, linger=True)
        if self._buffer:
            return self._take(batch)
        self._raise_pending_error()
        return []


__all__ = [
    "LINGER_S",
    "NO_WAIT_ANSWER_S",
    "Delivery",
    "NoResponders",
    "PullError",
    "Puller",
    "delivery",
]
