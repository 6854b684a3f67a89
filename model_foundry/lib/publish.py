"""Publishing events to NATS: from JSONL files, or any events made with :func:`make_event`
(the realistic samples of ``devtools/sample_events.py``, for instance).

Every publish sets ``Nats-Msg-Id`` to the ``event_id`` so JetStream drops re-sends inside
its duplicate window, exactly as the familiar does.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nats.aio.client import Client as NATS

from model_foundry.lib.events import LEGACY_SUBJECTS
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.nats.wire import MSG_ID_HEADER


@dataclass(frozen=True)
class OutgoingEvent:
    subject: str
    event_id: str
    body: bytes


def make_event(
    subject: str,
    payload: dict[str, Any],
    correlation_id: str,
    *,
    event_id: str | None = None,
    occurred_at: datetime | None = None,
) -> OutgoingEvent:
    event_id = event_id or str(uuid.uuid4())
    body = {
        "event_id": event_id,
        "correlation_id": correlation_id,
        "subject": LEGACY_SUBJECTS.get(subject, subject),
        "occurred_at": (occurred_at or datetime.now(UTC)).isoformat(),
        "payload": payload,
    }
    return OutgoingEvent(subject, event_id, json.dumps(body, ensure_ascii=False).encode("utf-8"))


def read_jsonl(path: Path, default_subject: str | None = None) -> Iterator[OutgoingEvent]:
    """Events from a JSONL file: each line one event body with a ``subject`` (or the default).

    A line that is not JSON is published as is when a default subject is given, so the
    dead-letter path can be exercised from a file; otherwise it is an error naming the line.
    """
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                body = json.loads(line)
            except ValueError:
                if default_subject is None:
                    raise ValueError(f"{path}:{lineno}: not JSON and no --subject given") from None
                yield OutgoingEvent(default_subject, "", line.rstrip(b"\r\n"))
                continue
            subject = (body.get("subject") if isinstance(body, dict) else None) or default_subject
            if not subject:
                raise ValueError(f"{path}:{lineno}: no 'subject' field and no --subject given")
            event_id = str(body.get("event_id", "")) if isinstance(body, dict) else ""
            yield OutgoingEvent(subject, event_id, line.rstrip(b"\r\n"))


async def publish_events(nc: NATS, events: Iterable[OutgoingEvent], *, window: int = 512) -> int:
    """Publish through JetStream with up to ``window`` acks outstanding; returns how many."""

    js = nc.jetstream()
    inflight: list[asyncio.Future[Any]] = []
    count = 0
    for event in events:
        headers = {MSG_ID_HEADER: event.event_id} if event.event_id else None
        inflight.append(
            asyncio.ensure_future(js.publish(event.subject, event.body, headers=headers))
        )
        count += 1
        if len(inflight) >= window:
            await asyncio.gather(*inflight)
            inflight.clear()
    if inflight:
        await asyncio.gather(*inflight)
    return count


def publish_with(res: NatsClient, events: Iterable[OutgoingEvent]) -> int:
    """Connect, make sure the stream exists, publish ``events``, close: the CLI's publish."""

    async def run() -> int:
        async with res.jetstream() as (nc, _js):
            return await publish_events(nc, events)

    return asyncio.run(run())


__all__ = [
    "OutgoingEvent",
    "make_event",
    "publish_events",
    "publish_with",
    "read_jsonl",
]
