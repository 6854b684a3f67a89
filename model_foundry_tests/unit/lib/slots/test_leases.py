"""Slot leases in NATS key-value storage, against real servers: the current release and 2.9.

Each limiter here has its own NATS connection, exactly as separate worker processes would;
the compare-and-set decisions are the server's, so one process is enough to test them and
its single monotonic clock lets the tests check the bound on a dead holder's place exactly.
"""

from __future__ import annotations

import nats
import pytest

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.slots.leases import LeaseSettings, LeaseValue, NatsLeaseLimiter

# Short enough for tests; renewals every 0.5 s leave a live holder 1.5 s of slack.
TTL = LeaseSettings(ttl_s=2.0, renew_every_s=0.5, resync_s=30.0)


@pytest.fixture
def server(nats_server: LocalNatsServer) -> LocalNatsServer:
    return nats_server


async def limiter(url: str, slots: dict[str, int], settings: LeaseSettings = TTL):
    nc = await nats.connect(url)
    return await NatsLeaseLimiter(nc, slots, settings).start()


async def close(*limiters: NatsLeaseLimiter) -> None:
    for lim in limiters:
        await lim.close()
        await lim.nc.close()


def test_lease_values_round_trip_and_unknown_values_count_as_held() -> None:
    value = LeaseValue("host:1:ab", "id1", "req", 1.0, 2.0, 3.0)
    assert LeaseValue.decode(value.encode()) == value
    assert LeaseValue.decode(b"") is None
    assert LeaseValue.decode(b"{") is not None
    assert LeaseValue.decode(b'{"holder": 1}') is not None


def test_settings_refuse_a_renewal_slower_than_the_ttl() -> None:
    with pytest.raises(ValueError, match="renew_every_s"):
        LeaseSettings(ttl_s=1.0, renew_every_s=2.0)
