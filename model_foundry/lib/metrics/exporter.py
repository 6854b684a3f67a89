"""``model-foundry metrics``: a long-running Prometheus exporter over DuckDB, NATS and the slots.

Three background readers keep the newest figures (see :mod:`.refresher`); ``/metrics`` is
served by ``prometheus_client``'s HTTP server from those cached figures only. The DuckDB file
is shared with the pipeline's writers, so the reader opens it read-only for one short visit
per interval and gives up after ``duckdb_wait_s`` when a writer holds it: the scrape then
serves the previous figures, and their age says how old they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from nats.js.errors import NotFoundError
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from model_foundry.lib import storage
from model_foundry.lib.events import SUBJECTS
from model_foundry.lib.metrics.collector import (
    ConsumerFigures,
    FoundryCollector,
    SlotLoad,
)
from model_foundry.lib.metrics.figures import DuckDBFigures, read_figures
from model_foundry.lib.metrics.refresher import Refresher, SourceUnavailableError
from model_foundry.lib.nats.connection import NatsClient, NatsUnavailableError
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.leases import LeaseError
from model_foundry.lib.slots.limiter import LeaseSlotPlaces, SlotLimiter

log = logging.getLogger(__name__)

DEFAULT_PORT = 9640
DEFAULT_HOST = "127.0.0.1"


def duckdb_reader(path: Path, wait_s: float) -> Callable[[], DuckDBFigures]:
    """Reads the figures in one read-only visit; a writer holding the file longer is 'busy'."""

    def read() -> DuckDBFigures:
        if not path.exists():
            # Nothing has been written yet (a fresh `make up`): no figures, and nothing stale.
            return DuckDBFigures(taken_at=time.time())
        try:
            with storage.connect(path, read_only=True, lock_timeout_s=wait_s) as con:
                return read_figures(con)
        except storage.DuckDBBusyError as exc:
            raise SourceUnavailableError("busy", str(exc), expected=True) from None

    return read


class NatsReader:
    """Consumer counts over one connection kept between reads, re-made when it breaks."""

    def __init__(self, nats: NatsClient, subjects: Sequence[str] = SUBJECTS) -> None:
        self.nats = nats
        self.subjects = list(subjects)
        self._loop = asyncio.new_event_loop()
        self._nc = None

    def __call__(self) -> dict[str, ConsumerFigures]:
        return self._loop.run_until_complete(self._read())

    async def _read(self) -> dict[str, ConsumerFigures]:
        if self._nc is None or self._nc.is_closed:
            try:
                self._nc = await self.nats.connect()
            except NatsUnavailableError as exc:
                raise SourceUnavailableError("unreachable", str(exc)) from None
        js = self._nc.jetstream()
        figures: dict[str, ConsumerFigures] = {}
        try:
            for subject in self.subjects:
                try:
                    p = await self.nats.pending(js, subject)
                except NotFoundError:
                    # Not set up yet: the exporter reads and never creates streams or consumers.
                    continue
                figures[subject] = ConsumerFigures(
                    subject=subject,
                    consumer=p.consumer,
                    pending=p.num_pending,
                    ack_pending=p.num_ack_pending,
                    redelivered=p.num_redelivered,
                )
        except Exception as exc:
            await self._close()
            raise SourceUnavailableError(
                "unreachable", f"NATS at {self.nats.redacted_servers}: {type(exc).__name__}"
            ) from None
        return figures

    async def _close(self) -> None:
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.close()
            self._nc = None

    def close(self) -> None:
        self._loop.run_until_complete(self._close())
        self._loop.close()


class SlotPlaces(Protocol):
    """What the exporter asks of the slot limiter: requests in flight against ``parallel``."""

    def in_flight(self, slot: str) -> int: ...

    def parallel(self, slot: str) -> int: ...


class FlockSlotPlaces:
    """The dispatcher's flock limiter of each slot, read without taking a place."""

    def __init__(self, slots: Sequence[Slot], lock_dir: Path | None) -> None:
        self._limiters = {s.name: SlotLimiter(s.name, s.parallel, lock_dir) for s in slots}

    def in_flight(self, slot: str) -> int:
        return self._limiters[slot].in_flight()

    def parallel(self, slot: str) -> int:
        return self._limiters[slot].parallel


def slot_reader(slots: Sequence[Slot], places: SlotPlaces) -> Callable[[], list[SlotLoad]]:
    """In-flight per slot, asked of the limiter the dispatcher uses."""

    def read() -> list[SlotLoad]:
        return [
            SlotLoad(
                slot=s.name,
                runtime=s.runtime,
                model=s.model,
                parallel=places.parallel(s.name),
                in_flight=places.in_flight(s.name),
            )
            for s in slots
        ]

    return read


@dataclass
class ExporterSettings:
    db_path: Path
    nats: NatsClient | None
    slots: list[Slot]
    lock_dir: Path | None = None
    # The NATS whose slot leases the dispatcher uses (None: it uses flock files here).
    slot_leases: NatsClient | None = None
    duckdb_interval_s: float = 5.0
    duckdb_wait_s: float = 1.0
    nats_interval_s: float = 5.0
    slots_interval_s: float = 1.0


@dataclass
class Exporter:
    """The refreshers and the registry they feed; :meth:`serve` puts them on HTTP."""

    settings: ExporterSettings
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    refreshers: list[Refresher] = field(default_factory=list)
    _nats_reader: NatsReader | None = None
    _lease_places: LeaseSlotPlaces | None = None
    _server: object | None = None

    def start(self) -> Exporter:
        s = self.settings
        duckdb = Refresher("duckdb", duckdb_reader(s.db_path, s.duckdb_wait_s), s.duckdb_interval_s)
        nats = None
        if s.nats is not None:
            self._nats_reader = NatsReader(s.nats)
            nats = Refresher("nats", self._nats_reader, s.nats_interval_s)
        places = self._slot_places()
        slots = Refresher("slots", slot_reader(s.slots, places), s.slots_interval_s)
        self.refreshers = [r for r in (duckdb, nats, slots) if r is not None]
        self.registry.register(FoundryCollector(duckdb, nats, slots))
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        for refresher in self.refreshers:
            refresher.start()
        return self

    def _slot_places(self) -> SlotPlaces:
        """The limiter the dispatcher uses: NATS leases where it shares them, else flock."""
        s = self.settings
        if s.slot_leases is not None:
            try:
                self._lease_places = LeaseSlotPlaces.open(
                    s.slot_leases, {slot.name: slot.parallel for slot in s.slots}
                )
                return self._lease_places
            except (NatsUnavailableError, LeaseError, TimeoutError) as exc:
                log.warning("slot leases unreadable, showing this machine's flock files: %s", exc)
        return FlockSlotPlaces(s.slots, s.lock_dir)

    def serve(self, port: int = DEFAULT_PORT, host: str = DEFAULT_HOST) -> int:
        """Serve ``/metrics`` on a daemon thread; the bound port (``port=0`` picks a free one)."""
        server, _thread = start_http_server(port, addr=host, registry=self.registry)
        self._server = server
        return int(server.server_address[1])

    def stop(self) -> None:
        for refresher in self.refreshers:
            refresher.stop()
        if self._server is not None:
            self._server.shutdown()  # type: ignore[attr-defined]
            self._server.server_close()  # type: ignore[attr-defined]
        if self._nats_reader is not None:
            self._nats_reader.close()
        if self._lease_places is not None:
            self._lease_places.close()


def run_forever(exporter: Exporter, stop: threading.Event) -> None:
    """Block until ``stop`` is set (the CLI sets it on SIGINT/SIGTERM), then shut down."""
    try:
        stop.wait()
    finally:
        exporter.stop()


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "Exporter",
    "ExporterSettings",
    "FlockSlotPlaces",
    "NatsReader",
    "SlotPlaces",
    "duckdb_reader",
    "run_forever",
    "slot_reader",
]
