"""Dagster resources: the DuckDB file and the NATS servers, configured from the environment."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from model_foundry.defs.run_health.dead_runs import record_worker
from model_foundry.lib import settings, storage
from model_foundry.lib.nats.connection import DEFAULT_STREAM, NatsClient
from model_foundry.lib.slots.config import SlotFile, SlotFileError, load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions
from model_foundry.lib.slots.source import SlotSource


class FoundryDuckDB(DuckDBResource):
    """``DuckDBResource`` whose connections wait out other processes' locks with jitter.

    The stock resource retries ten times without jitter and then surfaces DuckDB's raw lock
    error; runs, sensors and a person's ad-hoc query share one file here, so a busy file
    must cost a short wait, and a long one a sentence naming the file.
    """

    lock_timeout_s: float | None = Field(
        default=None,
        description=(
            "How long to wait for another process to release the DuckDB file; unset: "
            "MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT (120 s)."
        ),
    )

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # Every run of this code location uses DuckDB, so this is where a run worker says
        # who it is: run_health can then tell a dead worker's run from a slow one.
        if context.instance is not None and context.run is not None:
            record_worker(context.instance, context.run.run_id, os.getpid())

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with storage.connect(self.database, lock_timeout_s=self.lock_timeout_s) as con:
            yield con


def duckdb_resource_from_env() -> FoundryDuckDB:
    return FoundryDuckDB(database=str(settings.duckdb_path()))


class NatsResource(dg.ConfigurableResource):
    """The NATS servers that carry the familiar's events, as Dagster configures them.

    Credentials come from ``dg.EnvVar`` (:func:`nats_resource_from_env`), so the UI, the run
    config, the logs and the metadata show the variables' names, never their values. The work
    is done by the plain :class:`NatsClient` that :meth:`client` builds.
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
        default=50,
        description=(
            "Deliveries after which a message that still cannot be stored is dead-lettered "
            "with the error (JetStream itself never stops redelivering)."
        ),
    )
    max_ack_pending: int = 20_000

    def client(self) -> NatsClient:
        return NatsClient(**{f.name: getattr(self, f.name) for f in dataclasses.fields(NatsClient)})

    @classmethod
    def of(cls, client: NatsClient) -> NatsResource:
        """The resource that builds ``client`` again (tests and tools that start their own
        server hand it to Dagster this way)."""
        return cls(**dataclasses.asdict(client))


def nats_resource_from_env() -> NatsResource:
    """The resource from NATS_URL and the NATS_* credential variables, secrets as ``EnvVar``.

    A ``NATS_URL`` with credentials in it (``nats://user:password@host``) is passed the same
    way: the UI then shows ``NATS_URL``, never the URL.
    """
    # EnvVar fails when the variable is unset, so only the ones a user set are wired.
    secrets: dict = {
        field: dg.EnvVar(var) for field, var in settings.nats_secret_vars_set().items()
    }
    servers: str | dg.EnvVar = ",".join(settings.nats_urls())
    if settings.nats_url_has_userinfo():
        servers = dg.EnvVar("NATS_URL")
    return NatsResource(servers=servers, **secrets)


class SlotsResource(dg.ConfigurableResource):
    """The slot file and profile the assets send prompts with, and how slot limits are shared.

    With ``nats`` set (the pipeline's NATS, wired by :func:`resources_from_env` whenever
    ``NATS_URL`` is set, as under ``make up``), every worker on every machine shares each
    slot's ``parallel`` places as NATS key-value leases; without it, or when that NATS cannot
    be reached (``limiter: auto``), flock files on this machine keep the limit.
    """

    slot_file: str = Field(
        default_factory=lambda: str(settings.slot_file_path()),
        description="Path of the slot file (MODEL_FOUNDRY_SLOTS).",
    )
    profile: str | None = Field(
        default=None,
        description="Active profile; unset uses MODEL_FOUNDRY_PROFILE or the file's default.",
    )
    request_timeout_s: float | None = Field(
        default=None, description="Overrides every slot's request timeout when set."
    )
    limiter: str = Field(
        default="auto",
        description="auto | nats | flock: how slot limits are shared (MODEL_FOUNDRY_SLOT_LIMITER).",
    )
    lease_ttl_s: float = Field(
        default=30.0,
        description="A dead worker's slot lease returns this long after its last renewal.",
    )
    lease_replicas: int = Field(
        default=1, description="Replicas of the lease bucket when it is created."
    )
    nats: NatsResource | None = None

    def load(self) -> SlotFile:
        """The slot file; a bad one fails the run with its one sentence, never a stack (a
        retry reads the same file)."""
        try:
            return load_slot_file(self.slot_file)
        except SlotFileError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from None

    def source(self) -> SlotSource:
        """The same slots in plain code, as the lib's runs take them."""
        return SlotSource(
            slot_file=self.slot_file, profile=self.profile,
            request_timeout_s=self.request_timeout_s, limiter=self.limiter,
            lease_ttl_s=self.lease_ttl_s, lease_replicas=self.lease_replicas,
            nats=self.nats.client() if self.nats is not None else None,
        )  # fmt: skip

    def context_book(self, slot_file: SlotFile) -> ContextBook:
        """Context windows and token counts of the profile's live slots (asked lazily)."""
        return self.source().context_book(slot_file)

    def dispatch_options(self) -> DispatchOptions:
        return self.source().dispatch_options()


def slots_resource_from_env(nats: NatsResource | None = None) -> SlotsResource:
    """``nats`` shares slot limits across machines; it is used only when ``NATS_URL`` is set
    (or ``MODEL_FOUNDRY_SLOT_LIMITER=nats``), so a bare checkout never touches a stranger's
    server on the default port."""
    return SlotsResource(
        slot_file=str(settings.slot_file_path()),
        limiter=settings.slot_limiter(),
        lease_ttl_s=settings.slot_lease_ttl_s(),
        lease_replicas=settings.nats_replicas(),
        nats=nats if settings.slot_leases_wanted() else None,
    )


def resources_from_env() -> dict[str, object]:
    """The one resource wiring: the code location, the demo and `dataset collect` use it."""
    nats = nats_resource_from_env()
    return {
        "duckdb": duckdb_resource_from_env(),
        "nats": nats,
        "slots": slots_resource_from_env(nats),
    }


@dg.definitions
def resources() -> dg.Definitions:
    """The code location's resources, registered once for every asset, check and sensor."""
    return dg.Definitions(resources=resources_from_env())


__all__ = [
    "FoundryDuckDB",
    "NatsResource",
    "SlotsResource",
    "duckdb_resource_from_env",
    "nats_resource_from_env",
    "resources",
    "resources_from_env",
    "slots_resource_from_env",
]
