"""``model-foundry bench slots``: how close the dispatcher gets to what the slots could serve.

Starts the slot simulator (dev/test tool) for the standard profile, sends N prompts through
the dispatcher and compares the achieved request rate with the ideal one: every live slot busy
with exactly ``parallel`` requests for the whole run,

    ideal_rps = sum over live slots of parallel / mean simulated latency of its requests,

with each request's latency taken from the simulator's own latency model for the exact
request the client sends, less the prefill a llama.cpp-shaped slot's prompt cache spared (as
the simulator reports after the run). Prompts are shared out in proportion to each slot's
capacity, so an ideal dispatcher finishes every slot at the same moment. Targets:
``ratio >= 0.95`` and ``max_in_flight == parallel`` on every slot (as counted by the
simulator, queued included).

Where the rest goes, per slot: ``busy_share`` is the time requests were open as the client saw
them, over ``parallel`` x the run (1.0: never a place idle), and ``mean_request_s`` against
``mean_latency_s`` is what each request cost beyond the latency model (HTTP, the simulator's
and the client's own work). Roughly, ``ratio`` = ``busy_share`` x model / request time.
The ideal is for an endless stream of prompts: a batch this size also loses the last wave,
where a slot's last requests end at different moments (docs/benchmarks.md has how much).

By default the simulator runs in a subprocess, so its CPU time does not compete with the
dispatcher for one GIL (``simulator="inprocess"`` keeps it in the same event loop).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from model_foundry.devtools.bench.slot_common import (
    charged_latency,
    plan,
    request_seconds,
    simulator_stats,
    slot_rows,
    subprocess_simulator,
)
from model_foundry.devtools.bench.slot_workers import run_bench_slot_workers
from model_foundry.devtools.simulator.server import SlotSimulator
from model_foundry.lib.slots.config import SlotFile, load_slot_file
from model_foundry.lib.slots.dispatcher import DispatchOptions, dispatch


async def bench_slots(
    prompts: int = 500,
    *,
    slot_file: SlotFile | None = None,
    profile: str = "standard",
    speed: float = 2.0,
    simulator: Literal["subprocess", "inprocess"] = "subprocess",
    samples: int = 1,
) -> dict[str, Any]:
    slot_file = slot_file or load_slot_file()
    tasks, mean_latency = plan(slot_file, profile, prompts, speed, samples)
    live = slot_file.live_slots(profile)
    with tempfile.TemporaryDirectory(prefix="mf-bench-slots-") as tmp:
        workdir = Path(tmp)
        options = DispatchOptions(lock_dir=workdir / "locks")
        if simulator == "inprocess":
            async with SlotSimulator(
                slot_file, profile=profile, free_ports=True, speed=speed
            ) as sim:
                t0 = time.monotonic()
                result = await dispatch(tasks, sim.slot_file, profile, options=options)
                seconds = time.monotonic() - t0
                stats = sim.stats()
        else:
            async with subprocess_simulator(slot_file, profile, speed, workdir) as live_file:
                t0 = time.monotonic()
                result = await dispatch(tasks, live_file, profile, options=options)
                seconds = time.monotonic() - t0
                stats = await simulator_stats(live_file, profile)
    # The ideal at the latency the simulator charged, prompt-cache reuse included.
    mean_latency = charged_latency(live, mean_latency, stats, speed)
    ideal_rps = sum(s.parallel / mean_latency[s.name] for s in live)
    achieved = len(tasks) / seconds if seconds > 0 else 0.0
    return {
        "prompts": len(tasks),
        "seconds": round(seconds, 3),
        "achieved_rps": round(achieved, 2),
        "ideal_rps": round(ideal_rps, 2),
        "ratio": round(achieved / ideal_rps, 3) if ideal_rps else None,
        "ok": result.ok_count,
        "errors": result.error_count,
        "simulator": simulator,
        "speed": speed,
        "samples": samples,
        "slots": slot_rows(live, stats, mean_latency, request_seconds(result.attempts), seconds),
    }


def run_bench_slots(prompts: int = 500, **kwargs: Any) -> dict[str, Any]:
    """Synchronous entry point; see ``bench_slots`` for the keyword arguments."""
    return asyncio.run(bench_slots(prompts, **kwargs))


def run(args: argparse.Namespace) -> int:
    from model_foundry.lib.slots.config import SlotFileError

    try:
        slot_file = load_slot_file(args.slots)
        if getattr(args, "workers", 1) > 1:
            report = run_bench_slot_workers(
                args.prompts,
                args.workers,
                slot_file=slot_file,
                profile=args.profile,
                speed=args.speed,
                nats_binary=args.nats_server,
                samples=getattr(args, "samples", 1),
            )
        else:
            report = run_bench_slots(
                args.prompts,
                slot_file=slot_file,
                profile=args.profile,
                speed=args.speed,
                simulator=args.simulator,
                samples=getattr(args, "samples", 1),
            )
    except SlotFileError as exc:
        # A bad slot file is one sentence and exit 1, as every verb of the CLI.
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"{report['prompts']} prompts in {report['seconds']}s: {report['achieved_rps']} req/s "
            f"of an ideal {report['ideal_rps']} (ratio {report['ratio']})"
        )
        if "workers" in report:
            print(
                f"  {report['workers']} worker processes sharing NATS leases "
                f"({report['nats_server']}): {report['kv_ops_per_request']} KV operations "
                "per request"
            )
        for name, s in report["slots"].items():
            print(
                f"  {name:<14} parallel={s['parallel']} max_in_flight={s['max_in_flight']} "
                f"completed={s['completed']}"
            )
    full = all(s["max_in_flight"] == s["parallel"] for s in report["slots"].values())
    return 0 if full and report["errors"] == 0 else 1


__all__ = ["bench_slots", "run", "run_bench_slots"]
