"""The NATS resource is a thin Dagster wrapper: it builds exactly the plain client it was given."""

from __future__ import annotations

from model_foundry.defs.resources import NatsResource
from model_foundry.lib.nats.connection import NatsClient


def test_the_nats_resource_builds_the_client_it_describes() -> None:
    client = NatsClient(
        servers="tls://a:4222,tls://b:4222",
        user="u",
        password="p",
        tls_ca="/ca.pem",
        stream="S",
        ack_wait_s=7.0,
        max_deliver=3,
    )
    assert NatsResource.of(client).client() == client
    # Every setting of the client is a field of the resource, so Dagster can configure it.
    assert set(NatsResource.model_fields) >= set(client.__dataclass_fields__)


def test_the_client_repr_names_the_servers_without_their_secrets() -> None:
    client = NatsClient(servers="nats://u:hunter2@h:4222", password="hunter2", token="t0k")
    assert "hunter2" not in repr(client) and "t0k" not in repr(client)
    assert "***@h:4222" in repr(client)
