"""Publishing helpers for the ingestion tests (real nats-py against the test's server)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from model_foundry.lib.inbox.publish import OutgoingEvent, publish_events
from model_foundry.lib.nats.resource import NatsResource


def publish(res: NatsResource, events: Iterable[OutgoingEvent]) -> int:
    async def go() -> int:
        nc = await res.connect()
        try:
            return await publish_events(nc, events)
        finally:
            await nc.close()

    return asyncio.run(go())


def publish_raw(res: NatsResource, items: Iterable[tuple[str, bytes]]) -> None:
    """Publish bodies as is, without Nats-Msg-Id, like a misbehaving publisher would."""

    async def go() -> None:
        nc = await res.connect()
        try:
            js = nc.jetstream()
            for subject, body in items:
                await js.publish(subject, body)
        finally:
            await nc.close()

    asyncio.run(go())
