"""Publishing events to NATS: from JSONL files, or any events made with :func:`make_event`
(the realistic samples of ``devtools/sample_events.py``, for instance).

Every publish sets ``Nats-Msg-Id`` to the ``event_id`` so JetStream drops re-sends inside
its duplicate window, exactly as the familiar does.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nats.aio.client import Client as NATS

from model_foundry.lib.events import ALL_SUBJECTS, LEGACY_SUBJECTS, SUBJECTS
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


# Past this many, bad lines are counted, not listed: a wrong file shows its kind of mistake
# in the first few lines and would otherwise flood the terminal.
MAX_BAD_LINES_SHOWN = 20


@dataclass(frozen=True)
class JsonlFile:
    """A JSONL file read and checked whole: its events, and one sentence per bad line."""

    events: list[OutgoingEvent]
    bad: list[str]

    @property
    def lines(self) -> int:
        """Non-blank lines read."""
        return len(self.events) + len(self.bad)


def unknown_subject(subject: object) -> str:
    """Why ``subject`` is refused: it names the subject and every one the stream takes."""
    return (
        f"unknown subject {subject!r}; the stream takes {', '.join(SUBJECTS)} "
        f"and the older {', '.join(LEGACY_SUBJECTS)}"
    )


def check_line(line: bytes, default_subject: str | None = None) -> OutgoingEvent | str:
    """One JSONL line as an event, or the reason it cannot be published.

    With a default subject, a line that is not a JSON object is published to it as is, so the
    dead-letter path can be exercised from a file; without one it is refused.
    """
    raw = line.rstrip(b"\r\n")
    try:
        body = json.loads(line)
    except ValueError as exc:
        if default_subject is not None:
            return OutgoingEvent(default_subject, "", raw)
        return f"not JSON ({getattr(exc, 'msg', None) or exc})"
    if not isinstance(body, dict):
        if default_subject is not None:
            return OutgoingEvent(default_subject, "", raw)
        return f"not a JSON object (a {type(body).__name__})"
    subject = body.get("subject")
    if subject is None or subject == "":
        if default_subject is None:
            return 'no "subject" field and no --subject given'
        subject = default_subject
    if subject not in ALL_SUBJECTS:
        return unknown_subject(subject)
    return OutgoingEvent(subject, str(body.get("event_id", "")), raw)


def read_jsonl(path: Path, default_subject: str | None = None) -> JsonlFile:
    """Every event of a JSONL file (one event body per line, each with a ``subject`` or the
    default), and each bad line as ``file:line: reason``; the whole file is read before
    anything is published, so a bad line anywhere can stop all of it."""
    events: list[OutgoingEvent] = []
    bad: list[str] = []
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            checked = check_line(line, default_subject)
            if isinstance(checked, str):
                bad.append(f"{path}:{lineno}: {checked}")
            else:
                events.append(checked)
    return JsonlFile(events, bad)


def bad_lines_shown(bad: list[str], limit: int = MAX_BAD_LINES_SHOWN) -> list[str]:
    """The first ``limit`` bad lines, then how many more there are."""
    more = len(bad) - limit
    return bad[:limit] + ([f"... and {more} more bad lines"] if more > 0 else [])


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
    "MAX_BAD_LINES_SHOWN",
    "JsonlFile",
    "OutgoingEvent",
    "bad_lines_shown",
    "check_line",
    "make_event",
    "publish_events",
    "publish_with",
    "read_jsonl",
    "unknown_subject",
]
