"""Publishing helpers for the ingestion tests (real nats-py against the test's server)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from model_foundry.lib.inbox.publish import OutgoingEvent, publish_with
from model_foundry.lib.nats.resource import NatsResource


def publish(res: NatsResource, events: Iterable[OutgoingEvent]) -> int:
    return publish_with(res, events)


def publish_raw(res: NatsResource, items: Iterable[tuple[str, bytes]]) -> None:
    """Publish bodies as is, without Nats-Msg-Id, like a misbehaving publisher would."""

    async def go() -> None:
        async with res.jetstream() as (_nc, js):
            for subject, body in items:
                await js.publish(subject, body)

    asyncio.run(go())
