"""NATS JetStream: the resource, the stream and its per-subject durable pull consumers.

One stream (``PIPELINE_EVENTS``) holds every contract subject and its legacy names. Each
partition of the inbox asset has one durable pull consumer that filters its subject and the
legacy names that map to it, with explicit acks, an ``ack_wait`` well above the time a batch
commit may take (including DuckDB lock waits), and a finite ``max_deliver``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from dataclasses import dataclass

import dagster as dg
import nats
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError
from pydantic import Field

from model_foundry import settings
from model_foundry.events import ALL_SUBJECTS, SUBJECTS, subjects_for

log = logging.getLogger(__name__)

DEFAULT_STREAM = "PIPELINE_EVENTS"


class NatsUnavailableError(RuntimeError):
    """No NATS server answered at the configured URLs."""


def consumer_name(subject: str) -> str:
    """Durable name for a partition; NATS names may not contain dots."""
    return "inbox_" + subject.replace(".", "_")


@dataclass(frozen=True)
class ConsumerPending:
    subject: str
    consumer: str
    num_pending: int
    num_ack_pending: int
    num_redelivered: int

    @property
    def outstanding(self) -> int:
        """Messages not yet stored: never delivered, or delivered and not acknowledged."""
        return self.num_pending + self.num_ack_pending


class NatsResource(dg.ConfigurableResource):
    """Connection settings for the NATS servers that carry the familiar's events.

    Credentials are meant to come from ``dg.EnvVar`` so they never appear in run config,
    logs or materialization metadata.
    """

    servers: str = Field(
        default="nats://127.0.0.1:4222", description="Comma-separated NATS server URLs."
    )
    user: str | None = None
    password: str | None = None
    token: str | None = None
    creds_file: str | None = Field(default=None, description="Path to a NATS .creds file.")
    tls_ca: str | None = Field(default=None, description="CA file to verify the server's TLS.")
    stream: str = DEFAULT_STREAM
    connect_timeout_s: float = 3.0
    ack_wait_s: float = Field(
        default=300.0, description="Longer than a batch commit, DuckDB lock waits included."
    )
    max_deliver: int = Field(
        default=50, description="Deliveries before JetStream stops redelivering a message."
    )
    max_ack_pending: int = 20_000

    @property
    def server_list(self) -> list[str]:
        return [s.strip() for s in self.servers.split(",") if s.strip()]

    def _tls_context(self) -> ssl.SSLContext | None:
        if self.tls_ca:
            return ssl.create_default_context(cafile=self.tls_ca)
        if any(s.startswith("tls://") for s in self.server_list):
            return ssl.create_default_context()
        return None

    async def connect(self) -> NATS:
        """Connect, or raise :class:`NatsUnavailableError` naming the URLs and the cause."""
        failures: list[str] = []

        async def on_error(exc: Exception) -> None:
            # nats-py reports each failed attempt here; keep them for one clear message.
            failures.append(f"{type(exc).__name__}: {exc}".strip())

        kwargs: dict = {
            "servers": self.server_list,
            "connect_timeout": self.connect_timeout_s,
            "max_reconnect_attempts": 3,
            "reconnect_time_wait": 0.5,
            "error_cb": on_error,
            "name": "model-foundry",
        }
        if self.user is not None:
            kwargs["user"] = self.user
            kwargs["password"] = self.password or ""
        if self.token:
            kwargs["token"] = self.token
        if self.creds_file:
            kwargs["user_credentials"] = self.creds_file
        tls = self._tls_context()
        if tls is not None:
            kwargs["tls"] = tls
        try:
            return await nats.connect(**kwargs)
        except Exception as exc:
            cause = failures[-1] if failures else f"{type(exc).__name__}: {exc}"
            raise NatsUnavailableError(
                f"cannot reach NATS at {', '.join(self.server_list)} ({cause}); start it with "
                "`make up` or point NATS_URL at a running server."
            ) from None

    def consumer_config(self, subject: str) -> ConsumerConfig:
        return ConsumerConfig(
            durable_name=consumer_name(subject),
            filter_subjects=subjects_for(subject),
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=self.ack_wait_s,
            max_deliver=self.max_deliver,
            max_ack_pending=self.max_ack_pending,
        )

    async def ensure_stream(self, js: JetStreamContext) -> list[str]:
        """Create the stream and the consumers if missing; returns what it created."""
        created: list[str] = []
        try:
            info = await js.stream_info(self.stream)
            missing = [s for s in ALL_SUBJECTS if s not in (info.config.subjects or [])]
            if missing:
                config = info.config
                config.subjects = [*(config.subjects or []), *missing]
                await js.update_stream(config)
                created.append(f"stream {self.stream}: added subjects {', '.join(missing)}")
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
            created.append(f"stream {self.stream}")
        for subject in SUBJECTS:
            name = consumer_name(subject)
            try:
                await js.consumer_info(self.stream, name)
            except NotFoundError:
                await js.add_consumer(self.stream, self.consumer_config(subject))
                created.append(f"consumer {name}")
        return created

    async def pending(self, js: JetStreamContext, subject: str) -> ConsumerPending:
        name = consumer_name(subject)
        info = await js.consumer_info(self.stream, name)
        return ConsumerPending(
            subject=subject,
            consumer=name,
            num_pending=int(info.num_pending or 0),
            num_ack_pending=int(info.num_ack_pending or 0),
            num_redelivered=int(info.num_redelivered or 0),
        )

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
                    await self.ensure_stream(js)
                    return await self.pending(js, subject)
            finally:
                await nc.close()

        return asyncio.run(run())


def nats_resource_from_env(*, resolve_secrets: bool = False) -> NatsResource:
    """The resource from NATS_URL and the NATS_* credential variables.

    The code location passes credentials as ``dg.EnvVar`` so Dagster shows only their names;
    the CLI and benchmarks, which run outside Dagster, pass the values (``resolve_secrets``).
    """
    secrets: dict = {}
    for field, var in (
        ("user", "NATS_USER"),
        ("password", "NATS_PASSWORD"),
        ("token", "NATS_TOKEN"),
        ("creds_file", "NATS_CREDS"),
        ("tls_ca", "NATS_TLS_CA"),
    ):
        # EnvVar fails when the variable is unset, so only wire the ones a user set.
        if os.environ.get(var):
            secrets[field] = os.environ[var] if resolve_secrets else dg.EnvVar(var)
    return NatsResource(servers=",".join(settings.nats_urls()), **secrets)


__all__ = [
    "DEFAULT_STREAM",
    "ConsumerPending",
    "NatsResource",
    "NatsUnavailableError",
    "consumer_name",
    "nats_resource_from_env",
]
