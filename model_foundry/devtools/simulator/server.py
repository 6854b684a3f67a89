"""The simulator process: every slot of a slot file served on its own port."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from model_foundry.devtools.simulator.answers import (
    ErrorStyle,
    Faults,
    LatencyModel,
    ReasoningStyle,
    default_latency,
    default_reasoning_style,
)
from model_foundry.devtools.simulator.slot import SimSlot
from model_foundry.lib.slots.config import SlotFile, load_slot_file, write_slot_file


class SlotSimulator:
    """Serve slots in this process: ``async with SlotSimulator(slot_file, free_ports=True) as sim``.

    ``sim.slot_file`` is the slot file with base_urls pointing at the ports really bound;
    ``sim.write_slot_file(path)`` writes it for other processes.
    """

    def __init__(
        self,
        slot_file: SlotFile,
        *,
        slots: list[str] | None = None,
        profile: str | None = None,
        serve_all: bool = False,
        free_ports: bool = False,
        ports: dict[str, int] | None = None,
        host: str | None = None,
        speed: float = 1.0,
        latency: dict[str, LatencyModel] | LatencyModel | None = None,
        faults: dict[str, Faults] | Faults | None = None,
        reasoning_styles: dict[str, ReasoningStyle] | None = None,
        error_styles: dict[str, ErrorStyle] | None = None,
        start_delay_s: float = 0.0,
        max_chunks: int = 8,
        seed: int | None = 0,
    ) -> None:
        if slots is None:
            slots = (
                list(slot_file.slots)
                if serve_all
                else [s.name for s in slot_file.live_slots(profile)]
            )
        unknown = [n for n in slots if n not in slot_file.slots]
        if unknown:
            raise ValueError(f"unknown slot(s) {unknown} in {slot_file.source}")
        self.source = slot_file
        self.free_ports = free_ports
        self.ports = dict(ports or {})
        self.host = host
        self.sims: dict[str, SimSlot] = {}
        for name in slots:
            slot = slot_file.slots[name]
            lat = latency.get(name) if isinstance(latency, dict) else latency
            flt = faults.get(name) if isinstance(faults, dict) else faults
            self.sims[name] = SimSlot(
                slot=slot,
                latency=lat or default_latency(slot),
                faults=dataclasses.replace(flt) if flt else Faults(),
                reasoning_style=(reasoning_styles or {}).get(name) or default_reasoning_style(slot),
                error_style=(error_styles or {}).get(name) or slot.runtime,
                speed=speed,
                start_delay_s=start_delay_s,
                max_chunks=max_chunks,
                seed=None if seed is None else seed + len(self.sims),
            )
        self._runners: list[web.AppRunner] = []
        self.slot_file = slot_file

    async def start(self) -> SlotSimulator:
        urls: dict[str, str] = {}
        seen: dict[tuple[str, int], str] = {}
        for name, sim in self.sims.items():
            host, port = sim.slot.host_port()
            host = self.host or host
            if self.free_ports:
                port = 0
            port = self.ports.get(name, port)
            if port and (host, port) in seen:
                raise ValueError(
                    f"slots {seen[(host, port)]} and {name} share {host}:{port}; "
                    "give each slot its own port"
                )
            seen[(host, port)] = name
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError as exc:
                sock.close()
                await self.stop()
                raise OSError(
                    f"slot {name}: cannot listen on {host}:{port}: {exc.strerror}"
                ) from None
            sock.listen(256)
            runner = web.AppRunner(sim.app(), access_log=None, handle_signals=False)
            await runner.setup()
            await web.SockSite(runner, sock).start()
            self._runners.append(runner)
            real_port = sock.getsockname()[1]
            sim.url = f"http://{host}:{real_port}/v1"
            sim.started = time.monotonic()
            urls[name] = sim.url
        self.slot_file = self.source.with_base_urls(urls)
        return self

    async def stop(self) -> None:
        runners, self._runners = self._runners, []
        for runner in runners:
            await runner.cleanup()

    async def __aenter__(self) -> SlotSimulator:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def base_urls(self) -> dict[str, str]:
        return {n: s.url for n, s in self.sims.items()}

    def stats(self) -> dict[str, dict[str, Any]]:
        return {n: s.stats_dict() for n, s in self.sims.items()}

    def reset_stats(self) -> None:
        for s in self.sims.values():
            s.queue.reset()

    def set_faults(self, slot: str, **changes: Any) -> None:
        self.sims[slot].faults.update(changes)

    def write_slot_file(self, path: str | Path) -> Path:
        return write_slot_file(self.slot_file, path)


# ---------------------------------------------------------------------------------------------


# ``model-foundry simulate-slots`` (its arguments are defined in simulator/command.py).


def simulator_from_args(args: argparse.Namespace) -> SlotSimulator:
    slot_file = load_slot_file(args.slots)
    faults = Faults(
        error_rate=args.error_rate,
        error_status=args.error_status,
        burst_503=args.burst_503,
        burst_429=args.burst_429,
        slowdown=args.slowdown,
        drop_rate=args.drop_rate,
    )
    return SlotSimulator(
        slot_file,
        slots=args.only,
        profile=args.profile,
        serve_all=args.serve_all,
        free_ports=args.free_ports,
        host=args.host,
        speed=args.speed,
        faults=faults,
        start_delay_s=args.start_delay,
        max_chunks=args.max_chunks,
        seed=args.seed,
    )


async def serve(args: argparse.Namespace, *, ready: asyncio.Event | None = None) -> None:
    sim = simulator_from_args(args)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with sim:
        if args.write_slot_file:
            sim.write_slot_file(args.write_slot_file)
        for name, url in sim.base_urls.items():
            s = sim.sims[name].slot
            print(
                f"simulating {name:<14} {s.runtime:<8} parallel={s.parallel:<3} {url}", flush=True
            )
        print("slot simulator (dev/test tool) ready; Ctrl-C to stop", flush=True)
        if ready is not None:
            ready.set()
        await stop.wait()


def run(args: argparse.Namespace) -> int:
    from model_foundry.lib.slots.config import SlotFileError

    try:
        asyncio.run(serve(args))
    except (SlotFileError, OSError) as exc:
        # Expected errors: one sentence and exit 1, as every verb of the CLI.
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


__all__ = ["SlotSimulator", "run", "serve", "simulator_from_args"]
