"""Slot leases in NATS key-value storage, against real servers: the current release and 2.9.

Each limiter here has its own NATS connection, exactly as separate worker processes would;
the compare-and-set decisions are the server's, so one process is enough to test them and
its single monotonic clock lets the tests check the bound on a dead holder's place exactly.

What the unit, integration and system tests of ``lib/slots/test_leases.py`` share."""

from __future__ import annotations

import nats
import pytest

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.slots.leases import LeaseSettings, NatsLeaseLimiter

TTL = LeaseSettings(ttl_s=2.0, renew_every_s=0.5, resync_s=30.0)


@pytest.fixture(name="server")
def server_fixture(nats_server: LocalNatsServer) -> LocalNatsServer:
    return nats_server


async def limiter(url: str, slots: dict[str, int], settings: LeaseSettings = TTL):
    nc = await nats.connect(url)
    return await NatsLeaseLimiter(nc, slots, settings).start()


async def close(*limiters: NatsLeaseLimiter) -> None:
    for lim in limiters:
        await lim.close()
        await lim.nc.close()
