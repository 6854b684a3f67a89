"""``model-foundry bench slots --workers N``: N dispatcher processes that share only NATS.

Each worker is a separate process with a lock folder of its own (as on separate machines: no
shared filesystem), so the only thing that can keep a slot within ``parallel`` is the NATS
lease limiter. The slot simulator, in its own process, counts what it really has in flight
across all of them. Each slot's prompts of ``bench slots`` are dealt round-robin to the
workers, so each has a share of every slot's work; all start together at a barrier, and the
run's time is from the barrier until the last worker's ``dispatch`` returns (its NATS
connection, lease watches and their closing included; process start-up and exit excluded).

Run one worker by hand (the tests do) with
``python -m model_foundry.devtools.bench.slot_workers --slots F --nats URL --index I ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from model_foundry.devtools.bench.slot_common import (
    charged_latency,
    plan,
    request_seconds,
    simulator_stats,
    slot_rows,
    subprocess_simulator,
)
from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib import settings
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.slots.config import SlotFile, load_slot_file
from model_foundry.lib.slots.dispatcher import DispatchOptions, Task, dispatch
from model_foundry.lib.slots.leases import LeaseSettings

WORKER_MODULE = "model_foundry.devtools.bench.slot_workers"


def worker_command(
    *,
    slots: Path,
    nats_url: str,
    index: int,
    workers: int,
    prompts: int,
    speed: float,
    lock_dir: Path,
    barrier: Path,
    out: Path,
    profile: str = "standard",
    lease_ttl_s: float = 30.0,
    samples: int = 1,
) -> list[str]:
    return [
        sys.executable,
        "-m",
        WORKER_MODULE,
        "--slots",
        str(slots),
        "--nats",
        nats_url,
        "--index",
        str(index),
        "--workers",
        str(workers),
        "--prompts",
        str(prompts),
        "--speed",
        str(speed),
        "--lock-dir",
        str(lock_dir),
        "--barrier",
        str(barrier),
        "--out",
        str(out),
        "--profile",
        profile,
        "--lease-ttl",
        str(lease_ttl_s),
        "--samples",
        str(samples),
    ]


def worker_env() -> dict[str, str]:
    path = os.pathsep.join([str(settings.PROJECT_ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


async def _wait_for_go(barrier: Path, name: str, timeout_s: float = 120.0) -> None:
    (barrier / f"{name}.ready").touch()
    deadline = time.monotonic() + timeout_s
    while not (barrier / "go").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no go signal in {barrier}")
        await asyncio.sleep(0.005)


async def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    """One worker: its share of the bench prompts through the dispatcher with NATS leases."""
    slot_file = load_slot_file(args.slots)
    tasks, _ = plan(slot_file, args.profile, args.prompts, args.speed, args.samples)
    mine = worker_share(tasks, args.index, args.workers)
    options = DispatchOptions(
        lock_dir=args.lock_dir,
        slot_limiter="nats",
        nats=NatsClient(servers=args.nats),
        lease=LeaseSettings(ttl_s=args.lease_ttl),
    )
    await _wait_for_go(args.barrier, f"w{args.index}")
    started = time.time()
    result = await dispatch(mine, slot_file, args.profile, options=options)
    return {
        "index": args.index,
        "pid": os.getpid(),
        "tasks": len(mine),
        "ok": result.ok_count,
        "errors": result.error_count,
        "undone": len(result.undone),
        "stop_reason": result.stop_reason,
        "started_at": started,
        "finished_at": time.time(),
        "cpu_s": round(_cpu_s(), 3),
        "limiter": result.limiter,
        "request_s": request_seconds(result.attempts),
    }


def worker_share(tasks: list[Task], index: int, workers: int) -> list[Task]:
    """Worker ``index``'s tasks: every slot's tasks dealt round-robin on their own, so each
    worker has a share of every slot (dealing the interleaved list as a whole gave one worker
    all 51 translator prompts, since they come in groups of three with the other slots').
    The samples of one prompt (a family) go to one worker together, as one run asks them."""
    by_slot: dict[str, dict[str, list[Task]]] = {}
    for t in tasks:
        by_slot.setdefault(t.role, {}).setdefault(t.family or t.key, []).append(t)
    mine = {
        t.key
        for families in by_slot.values()
        for family in list(families.values())[index::workers]
        for t in family
    }
    return [t for t in tasks if t.key in mine]


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _worker_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog=WORKER_MODULE)
    p.add_argument("--slots", type=Path, required=True)
    p.add_argument("--nats", required=True)
    p.add_argument("--index", type=int, required=True)
    p.add_argument("--workers", type=int, required=True)
    p.add_argument("--prompts", type=int, required=True)
    p.add_argument("--speed", type=float, default=2.0)
    p.add_argument("--lock-dir", type=Path, required=True)
    p.add_argument("--barrier", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--profile", default="standard")
    p.add_argument("--lease-ttl", type=float, default=30.0)
    p.add_argument("--samples", type=int, default=1)
    args = p.parse_args(argv)
    report = asyncio.run(run_worker(args))
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(report))
    tmp.replace(args.out)
    return 0 if report["errors"] == 0 and report["undone"] == 0 else 1


def _combine_ops(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Every worker's KV operations added up, and per request sent (retries included)."""
    keys = ("takes", "take_conflicts", "steals", "renewals", "releases", "reads", "errors")
    ops = {k: sum(r["limiter"].get("kv_ops", {}).get(k, 0) for r in reports) for k in keys}
    ops["total"] = sum(r["limiter"].get("kv_ops", {}).get("total", 0) for r in reports)
    ops["requests"] = sum(r["limiter"].get("requests", 0) for r in reports)
    ops["per_request"] = round(ops["total"] / ops["requests"], 3) if ops["requests"] else None
    return ops


async def bench_slot_workers(
    prompts: int,
    workers: int,
    *,
    slot_file: SlotFile | None = None,
    profile: str = "standard",
    speed: float = 2.0,
    nats_binary: str | None = None,
    lease_ttl_s: float = 30.0,
    samples: int = 1,
) -> dict[str, Any]:
    slot_file = slot_file or load_slot_file()
    tasks, mean_latency = plan(slot_file, profile, prompts, speed, samples)
    live = slot_file.live_slots(profile)
    with tempfile.TemporaryDirectory(prefix="mf-bench-workers-") as tmp:
        work = Path(tmp)
        barrier = work / "barrier"
        barrier.mkdir()
        with LocalNatsServer(store_dir=work / "nats", binary=nats_binary) as server:
            async with subprocess_simulator(slot_file, profile, speed, work) as live_file:
                live_path = work / "bench-slots-live.yaml"
                outs = [work / f"worker-{i}.json" for i in range(workers)]
                procs = [
                    subprocess.Popen(
                        worker_command(
                            slots=live_path,
                            nats_url=server.url,
                            index=i,
                            workers=workers,
                            prompts=prompts,
                            speed=speed,
                            lock_dir=work / f"locks-{i}",
                            barrier=barrier,
                            out=outs[i],
                            profile=profile,
                            lease_ttl_s=lease_ttl_s,
                            samples=samples,
                        ),
                        env=worker_env(),
                        stdin=subprocess.DEVNULL,
                        stderr=subprocess.PIPE,
                    )
                    for i in range(workers)
                ]
                go_at = await _release(barrier, workers, procs)
                codes = [await asyncio.to_thread(p.wait) for p in procs]
                failed = [
                    (p.stderr.read().decode(errors="replace")[-800:] if p.stderr else "")
                    for p, c in zip(procs, codes, strict=True)
                    if c != 0 and not Path(outs[procs.index(p)]).exists()
                ]
                if failed:
                    raise RuntimeError(f"a bench worker failed: {failed[0].strip()}")
                reports = [json.loads(o.read_text()) for o in outs]
                stats = await simulator_stats(live_file, profile)
            server_version = _server_version(server)
    seconds = max(r["finished_at"] for r in reports) - go_at
    # The ideal at the latency the simulator charged, prompt-cache reuse included.
    mean_latency = charged_latency(live, mean_latency, stats, speed)
    ideal_rps = sum(s.parallel / mean_latency[s.name] for s in live)
    achieved = len(tasks) / seconds if seconds > 0 else 0.0
    return {
        "prompts": len(tasks),
        "workers": workers,
        "limiter": "nats",
        "nats_server": server_version,
        "seconds": round(seconds, 3),
        "achieved_rps": round(achieved, 2),
        "ideal_rps": round(ideal_rps, 2),
        "ratio": round(achieved / ideal_rps, 3) if ideal_rps else None,
        "ok": sum(r["ok"] for r in reports),
        "errors": sum(r["errors"] for r in reports) + sum(r["undone"] for r in reports),
        "speed": speed,
        "samples": samples,
        "kv_ops": _combine_ops(reports),
        "kv_ops_per_request": _combine_ops(reports)["per_request"],
        "per_worker": [
            {
                "index": r["index"],
                "tasks": r["tasks"],
                "ok": r["ok"],
                "seconds": round(r["finished_at"] - go_at, 3),
                "cpu_s": r["cpu_s"],
                "kv_ops_per_request": r["limiter"].get("kv_ops_per_request"),
            }
            for r in reports
        ],
        "slots": slot_rows(live, stats, mean_latency, _combine_request_s(reports), seconds),
    }


def _combine_request_s(reports: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in reports:
        for slot, (busy, n) in r["request_s"].items():
            row = out.setdefault(slot, [0.0, 0])
            row[0] += busy
            row[1] += n
    return out


async def _release(barrier: Path, workers: int, procs: list[subprocess.Popen[bytes]]) -> float:
    """Wait until every worker is connected and ready, then start them all at once."""
    deadline = time.monotonic() + 120
    while not all((barrier / f"w{i}.ready").exists() for i in range(workers)):
        if any(p.poll() is not None for p in procs):
            err = next(p for p in procs if p.poll() is not None).stderr
            raise RuntimeError(
                "a bench worker exited before the start: "
                + (err.read().decode(errors="replace")[-800:].strip() if err else "")
            )
        if time.monotonic() > deadline:
            raise RuntimeError("bench workers did not get ready within 120s")
        await asyncio.sleep(0.02)
    go_at = time.time()
    (barrier / "go").touch()
    return go_at


def _server_version(server: LocalNatsServer) -> str:
    binary = server.binary or "nats-server"
    try:
        out = subprocess.run(
            [server.binary or _default_binary(), "--version"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return binary
    return out.strip().removeprefix("nats-server: ")


def _default_binary() -> str:
    from model_foundry.devtools.local_nats import nats_server_binary

    return nats_server_binary()


def run_bench_slot_workers(prompts: int, workers: int, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(bench_slot_workers(prompts, workers, **kwargs))


if __name__ == "__main__":
    raise SystemExit(_worker_main(sys.argv[1:]))


__all__ = [
    "bench_slot_workers",
    "run_bench_slot_workers",
    "run_worker",
    "worker_command",
    "worker_env",
]
