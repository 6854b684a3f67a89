"""``model-foundry bench slots``: how close the dispatcher gets to what the slots could serve.

Starts the slot simulator (dev/test tool) for the standard profile, sends N prompts through
the dispatcher and compares the achieved request rate with the ideal one: every live slot busy
with exactly ``parallel`` requests for the whole run,

    ideal_rps = sum over live slots of parallel / mean simulated latency of its requests,

with each request's latency taken from the simulator's own latency model for the exact
request the client sends. Prompts are shared out in proportion to each slot's capacity, so an
ideal dispatcher finishes every slot at the same moment. Targets: ``ratio >= 0.95`` and
``max_in_flight == parallel`` on every slot (as counted by the simulator, queued included).

Where the rest goes, per slot: ``busy_share`` is the time requests were open as the client saw
them, over ``parallel`` x the run (1.0: never a place idle), and ``mean_request_s`` against
``mean_latency_s`` is what each request cost beyond the latency model (HTTP, the simulator's
and the client's own work). Roughly, ``ratio`` = ``busy_share`` x model / request time.
The ideal is for an endless stream of prompts: a batch this size also loses the last wave,
where a slot's last requests end at different moments (about 1% at 500 prompts).

By default the simulator runs in a subprocess, so its CPU time does not compete with the
dispatcher for one GIL (``simulator="inprocess"`` keeps it in the same event loop).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Literal

from model_foundry.devtools.simulator.answers import (
    DEFAULT_LATENCY,
    answer_chat,
    answer_completion,
    default_reasoning_style,
)
from model_foundry.devtools.simulator.server import SlotSimulator
from model_foundry.lib import settings
from model_foundry.lib.slots.client import Attempt, build_request
from model_foundry.lib.slots.config import Slot, SlotFile, load_slot_file, write_slot_file
from model_foundry.lib.slots.dispatcher import DispatchOptions, Task, dispatch

BENCH_TEXT = (
    "the quick brown fox jumps over the lazy dog while the slot dispatcher keeps every "
    "server busy with exactly as many requests as it serves in parallel"
)


def bench_task(slot: Slot, i: int) -> Task:
    words = BENCH_TEXT
    if slot.api == "completions":
        return Task(
            key=f"bench-{slot.name}-{i}",
            task="bench",
            role=slot.name,
            text=f"{i} {words}",
            prompt=f"{i} {words}",
        )
    return Task(
        key=f"bench-{slot.name}-{i}",
        task="bench",
        role=slot.name,
        messages=[{"role": "user", "content": f"prompt {i}: {words}"}],
    )


def simulated_latency_s(slot: Slot, task: Task, speed: float, thinking: bool | None) -> float:
    """The simulator's latency for the request the client will send for ``task``."""
    body = build_request(
        slot,
        messages=task.messages,
        prompt=task.prompt,
        text=task.text,
        params=task.params,
        thinking=thinking,
    )
    body = {**body, **body.pop("extra_body", {})}
    if slot.api == "chat":
        answer = answer_chat(body, default_reasoning_style(slot))
    else:
        answer = answer_completion(body)
    return DEFAULT_LATENCY[slot.runtime].seconds(
        answer.prompt_tokens, answer.completion_tokens, speed
    )


def plan(
    slot_file: SlotFile, profile: str, prompts: int, speed: float
) -> tuple[list[Task], dict[str, float]]:
    """Tasks shared out by slot capacity, and each slot's mean simulated latency."""
    live = slot_file.live_slots(profile)
    mean_latency = {
        s.name: simulated_latency_s(s, bench_task(s, 0), speed, slot_file.thinking_for_role(s.name))
        for s in live
    }
    capacity = {s.name: s.parallel / mean_latency[s.name] for s in live}
    total = sum(capacity.values())
    shares = {n: prompts * c / total for n, c in capacity.items()}
    counts = {n: int(v) for n, v in shares.items()}
    # Largest remainders get the prompts lost to rounding down.
    for n in sorted(shares, key=lambda n: shares[n] - counts[n], reverse=True)[
        : prompts - sum(counts.values())
    ]:
        counts[n] += 1
    tasks = [bench_task(s, i) for s in live for i in range(counts[s.name])]
    # Interleave so no slot waits for the queue of another role to drain first.
    tasks.sort(key=lambda t: int(t.key.rsplit("-", 1)[1]))
    for s in live:
        lat = [
            simulated_latency_s(s, t, speed, slot_file.thinking_for_role(s.name))
            for t in tasks
            if t.role == s.name
        ]
        if lat:
            mean_latency[s.name] = sum(lat) / len(lat)
    return tasks, mean_latency


def request_seconds(attempts: list[Attempt]) -> dict[str, list[float]]:
    """Per slot: the seconds its requests were open as the client saw them, and how many."""
    out: dict[str, list[float]] = {}
    for a in attempts:
        row = out.setdefault(a.slot, [0.0, 0])
        row[0] += a.latency_s or 0.0
        row[1] += 1
    return out


def slot_rows(
    live: list[Slot],
    stats: dict[str, Any],
    mean_latency: dict[str, float],
    request_s: dict[str, list[float]],
    seconds: float,
) -> dict[str, dict[str, Any]]:
    rows = {}
    for s in live:
        busy, n = request_s.get(s.name, [0.0, 0])
        rows[s.name] = {
            "parallel": s.parallel,
            "max_in_flight": stats[s.name]["max_in_flight"],
            "completed": stats[s.name]["completed"],
            "mean_latency_s": round(mean_latency[s.name], 4),
            "mean_request_s": round(busy / n, 4) if n else None,
            "busy_share": round(busy / (s.parallel * seconds), 3) if seconds > 0 else None,
        }
    return rows


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


@contextlib.asynccontextmanager
async def _subprocess_simulator(slot_file: SlotFile, profile: str, speed: float, workdir: Path):
    src = write_slot_file(slot_file, workdir / "bench-slots.yaml")
    out = workdir / "bench-slots-live.yaml"
    cmd = [
        sys.executable,
        "-m",
        "model_foundry.devtools.simulator",
        "--slots",
        str(src),
        "--profile",
        profile,
        "--free-ports",
        "--write-slot-file",
        str(out),
        "--speed",
        str(speed),
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(settings.PROJECT_ROOT), os.environ.get("PYTHONPATH", "")]
        ),
    }
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 30
        while not out.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"slot simulator did not start: {err.strip()[-500:]}")
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.05)  # the file is written just before the servers report ready
        yield load_slot_file(out)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def bench_slots(
    prompts: int = 500,
    *,
    slot_file: SlotFile | None = None,
    profile: str = "standard",
    speed: float = 2.0,
    simulator: Literal["subprocess", "inprocess"] = "subprocess",
) -> dict[str, Any]:
    slot_file = slot_file or load_slot_file()
    tasks, mean_latency = plan(slot_file, profile, prompts, speed)
    live = slot_file.live_slots(profile)
    ideal_rps = sum(s.parallel / mean_latency[s.name] for s in live)
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
            async with _subprocess_simulator(slot_file, profile, speed, workdir) as live_file:
                t0 = time.monotonic()
                result = await dispatch(tasks, live_file, profile, options=options)
                seconds = time.monotonic() - t0
                stats = {
                    s.name: await asyncio.to_thread(
                        _get_json, s.base_url.removesuffix("/v1") + "/_sim/stats"
                    )
                    for s in live_file.live_slots(profile)
                }
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
            from model_foundry.devtools.bench.slot_workers import run_bench_slot_workers

            report = run_bench_slot_workers(
                args.prompts,
                args.workers,
                slot_file=slot_file,
                profile=args.profile,
                speed=args.speed,
                nats_binary=args.nats_server,
            )
        else:
            report = run_bench_slots(
                args.prompts,
                slot_file=slot_file,
                profile=args.profile,
                speed=args.speed,
                simulator=args.simulator,
            )
    except (SlotFileError, RuntimeError) as exc:
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


__all__ = [
    "bench_slots",
    "plan",
    "request_seconds",
    "run",
    "run_bench_slots",
    "simulated_latency_s",
    "slot_rows",
]
