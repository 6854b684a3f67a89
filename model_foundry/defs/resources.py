"""Dagster resources: the DuckDB file and the NATS servers, configured from the environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from model_foundry.lib import settings, storage
from model_foundry.lib.nats.resource import NatsResource, nats_resource_from_env
from model_foundry.lib.run_health import record_worker
from model_foundry.lib.slots.config import SlotFile, load_slot_file
from model_foundry.lib.slots.dispatcher import DispatchOptions


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


class SlotsResource(dg.ConfigurableResource):
    """The slot file and profile the assets send prompts with (defaults from the environment)."""

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

    def load(self) -> SlotFile:
        return load_slot_file(self.slot_file)

    def dispatch_options(self) -> DispatchOptions:
        return DispatchOptions(request_timeout_s=self.request_timeout_s)


def slots_resource_from_env() -> SlotsResource:
    return SlotsResource(slot_file=str(settings.slot_file_path()))


def resources_from_env() -> dict[str, object]:
    """The one resource wiring: the code location, the demo and `dataset collect` use it."""
    return {
        "duckdb": duckdb_resource_from_env(),
        "nats": nats_resource_from_env(),
        "slots": slots_resource_from_env(),
    }


__all__ = [
    "FoundryDuckDB",
    "NatsResource",
    "SlotsResource",
    "duckdb_resource_from_env",
    "resources_from_env",
    "slots_resource_from_env",
]
