"""NATS JetStream: the connection settings, the client and the stream ``PIPELINE_EVENTS``.

One stream holds every contract subject and its legacy names. Each partition of the inbox
asset drains durable pull consumers laid out by ``lib/nats/consumers.py`` (one per partition,
or one per subject name on servers without ``filter_subjects``), with explicit acks, an
``ack_wait`` well above the time a batch commit may take (DuckDB lock waits included), and
no limit on redeliveries.

Plain code: the code location wraps :class:`NatsClient` in a Dagster resource
(``defs/resources.py``) so that credentials reach Dagster as variable names only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import NotFoundError

from model_foundry.lib import settings
from model_foundry.lib.events import ALL_SUBJECTS, SUBJECTS
from model_foundry.lib.nats.connect import open_connection, tls_context, without_userinfo
from model_foundry.lib.nats.consumers import (
    ConsumerPending,
    ConsumerSettings,
    PartitionConsumers,
    consumer_name,
    ensure_partition,
    partition_pending,
)
from model_foundry.lib.nats.errors import NatsLayoutError, NatsUnavailableError

log = logging.getLogger(__name__)


DEFAULT_STREAM = "PIPELINE_EVENTS"


@dataclass(frozen=True)
class NatsClient:
    """Connection settings for the NATS servers that carry the familiar's events, and what is
    done with them: connect, ensure the stream and consumers, count what is pending."""

    servers: str = "nats://127.0.0.1:4222"
    """Comma-separated NATS server URLs."""
    user: str | None = None
    password: str | None = None
    token: str | None = None
    creds_file: str | None = None
    """Path to a NATS .creds file."""
    tls_ca: str | None = None
    """CA file to verify the server's TLS."""
    stream: str = DEFAULT_STREAM
    connect_timeout_s: float = 3.0
    ack_wait_s: float = 300.0
    """Longer than a batch commit, DuckDB lock waits included."""
    max_deliver: int = 50
    """Deliveries after which a message that still cannot be stored is dead-lettered with the
    error (JetStream itself never stops redelivering)."""
    max_ack_pending: int = 20_000

    def __repr__(self) -> str:
        # Secrets stay out of logs and tracebacks that print the client.
        return f"NatsClient(servers={self.redacted_servers!r}, stream={self.stream!r})"

    @property
    def redacted_servers(self) -> str:
        """The server URLs for messages: any ``user:password@`` replaced by ``***@``."""
        return ", ".join(without_userinfo(url) for url in self.server_list)

    @property
    def server_list(self) -> list[str]:
        return [s.strip() for s in self.servers.split(",") if s.strip()]

    async def connect(self) -> NATS:
        """Connect, or raise :class:`NatsUnavailableError` naming the URLs and the cause."""
        options: dict[str, Any] = {}
        if self.user is not None:
            options["user"] = self.user
            options["password"] = self.password or ""
        if self.token:
            options["token"] = self.token
        if self.creds_file:
            options["user_credentials"] = self.creds_file
        tls = tls_context(self.server_list, self.tls_ca)
        if tls is not None:
            options["tls"] = tls
        return await open_connection(self.server_list, self.connect_timeout_s, options)

    @property
    def consumer_settings(self) -> ConsumerSettings:
        return ConsumerSettings(ack_wait_s=self.ack_wait_s, max_ack_pending=self.max_ack_pending)

    async def partition(self, js: JetStreamContext, subject: str) -> PartitionConsumers:
        """``subject``'s consumers, created or repaired to the layout this server keeps."""
        try:
            return await ensure_partition(js, self.stream, subject, self.consumer_settings)
        except NatsLayoutError as exc:
            raise NatsLayoutError(f"NATS at {self.redacted_servers}: {exc}") from None

    async def ensure_stream(
        self, js: JetStreamContext, subjects: Sequence[str] = SUBJECTS
    ) -> list[str]:
        """Create the stream if missing, and the consumers of ``subjects`` (every partition
        unless told otherwise); returns what it created or changed, one sentence each."""
        created: list[str] = []
        try:
            info = await js.stream_info(self.stream)
            missing = [s for s in ALL_SUBJECTS if s not in (info.config.subjects or [])]
            if missing:
                config = info.config
                config.subjects = [*(config.subjects or []), *missing]
                await js.update_stream(config)
                created.append(f"added subjects {', '.join(missing)} to stream {self.stream}")
        except NotFoundError:
            await js.add_stream(
                StreamConfig(
                    name=self.stream,
                    subjects=list(ALL_SUBJECTS),
                    storage=StorageType.FILE,
                    # Publishers set Nats-Msg-Id = event_id; re-sends inside this window are
                    # dropped by JetStream before they reach us at all.
                    duplicate_window=120.0,
                )
            )
            created.append(f"created stream {self.stream}")
        for subject in subjects:
            created += (await self.partition(js, subject)).changes
        return created

    async def pending(self, js: JetStreamContext, subject: str) -> ConsumerPending:
        """Counts summed over the partition's consumers (made if missing)."""
        return partition_pending(await self.partition(js, subject), self.ack_wait_s)

    @asynccontextmanager
    async def jetstream(self) -> AsyncIterator[tuple[NATS, JetStreamContext]]:
        """Connected, with the stream and consumers ensured; closed on the way out.

        The one connect-and-ensure path for everything that publishes or sets up (the CLI,
        the demo, the benchmarks, the tests); the drain manages its own connection because it
        rides out server restarts.
        """
        nc = await self.connect()
        try:
            js = nc.jetstream()
            await self.ensure_stream(js)
            yield nc, js
        finally:
            await nc.close()

    def setup(self) -> list[str]:
        """Synchronous ``ensure_stream`` for the CLI and the sensors."""

        async def run() -> list[str]:
            nc = await self.connect()
            try:
                return await self.ensure_stream(nc.jetstream())
            finally:
                await nc.close()

        return asyncio.run(run())

    def pending_for(self, subject: str) -> ConsumerPending:
        """Consumer counts only: reads no message, acknowledges nothing."""

        async def run() -> ConsumerPending:
            nc = await self.connect()
            try:
                js = nc.jetstream()
                try:
                    return await self.pending(js, subject)
                except NotFoundError:
                    # No stream yet (a fresh server): create it, then count.
                    await self.ensure_stream(js)
                    return await self.pending(js, subject)
            finally:
                await nc.close()

        return asyncio.run(run())


def nats_client_from_env() -> NatsClient:
    """The client from NATS_URL and the NATS_* credential variables, secrets resolved: for the
    CLI, the demo and the benchmarks, which run outside Dagster."""
    secrets = {
        field: settings.secret(var) for field, var in settings.nats_secret_vars_set().items()
    }
    return NatsClient(servers=",".join(settings.nats_urls()), **secrets)


__all__ = [
    "DEFAULT_STREAM",
    "ConsumerPending",
    "NatsClient",
    "NatsLayoutError",
    "NatsUnavailableError",
    "consumer_name",
    "nats_client_from_env",
]
