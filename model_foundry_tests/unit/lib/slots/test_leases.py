"""Slot leases in NATS key-value storage, against real servers: the current release and 2.9:
the unit tests."""

from __future__ import annotations

import pytest

from model_foundry.lib.slots.leases import LeaseSettings, LeaseValue
from model_foundry_tests.shared.lib.slots.leases import (  # noqa: F401 - fixtures are found by name
    server_fixture,
)

# Short enough for tests; renewals every 0.5 s leave a live holder 1.5 s of slack.


def test_lease_values_round_trip_and_unknown_values_count_as_held() -> None:
    value = LeaseValue("host:1:ab", "id1", "req", 1.0, 2.0, 3.0)
    assert LeaseValue.decode(value.encode()) == value
    assert LeaseValue.decode(b"") is None
    assert LeaseValue.decode(b"{") is not None
    assert LeaseValue.decode(b'{"holder": 1}') is not None


def test_settings_refuse_a_renewal_slower_than_the_ttl() -> None:
    with pytest.raises(ValueError, match="renew_every_s"):
        LeaseSettings(ttl_s=1.0, renew_every_s=2.0)
