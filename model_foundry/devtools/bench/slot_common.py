"""What ``bench slots`` and its ``--workers`` variant share: the prompts and their ideal, the
slot simulator in a subprocess, and the per-slot rows of the report."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from model_foundry.devtools.simulator.answers import (
    answer_chat,
    answer_completion,
    default_latency,
    default_reasoning_style,
)
from model_foundry.lib import settings
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import Slot, SlotFile, load_slot_file, write_slot_file
from model_foundry.lib.slots.dispatcher import Task
from model_foundry.lib.slots.request import build_request

BENCH_TEXT = (
    "the quick brown fox jumps over the lazy dog while the slot dispatcher keeps every "
    "server busy with exactly as many requests as it serves in parallel"
)


def bench_task(slot: Slot, i: int, samples: int = 1) -> Task:
    """Task ``i`` of ``slot``: with ``samples`` > 1, sample ``i % samples`` of prompt
    ``i // samples``, the samples of one prompt a family (``Task.family``)."""
    words, n = BENCH_TEXT, i // samples
    if slot.prompt_format == "plamo-translate":
        body = Body(text=f"{n} {words}")
    elif slot.api == "completions":
        body = Body(prompt=f"{n} {words}")
    else:
        body = Body(messages=[{"role": "user", "content": f"prompt {n}: {words}"}])
    family = f"prompt-{n}" if samples > 1 else None
    params = {"seed": i % samples} if samples > 1 else {}
    return Task(
        key=f"bench-{slot.name}-{i}", task="bench", role=slot.name, body=body, params=params,
        family=family,
    )  # fmt: skip


def simulated_latency_s(slot: Slot, task: Task, speed: float, thinking: bool | None) -> float:
    """The simulator's latency for the request the client will send for ``task``."""
    body = build_request(slot, task.body, task.params, thinking=thinking)
    body = {**body, **body.pop("extra_body", {})}
    if slot.api == "chat":
        answer = answer_chat(body, default_reasoning_style(slot))
    else:
        answer = answer_completion(body)
    return default_latency(slot).seconds(answer.prompt_tokens, answer.completion_tokens, speed)


def plan(
    slot_file: SlotFile, profile: str, prompts: int, speed: float, samples: int = 1
) -> tuple[list[Task], dict[str, float]]:
    """Tasks shared out by slot capacity (``samples`` of each prompt, see ``bench_task``),
    and each slot's mean simulated latency."""
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
    tasks = [bench_task(s, i, samples) for s in live for i in range(counts[s.name])]
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


def charged_latency(
    live: list[Slot], mean_latency: dict[str, float], stats: dict[str, Any], speed: float
) -> dict[str, float]:
    """Each slot's mean simulated latency less the prefill its prompt cache spared: a
    llama.cpp-shaped slot computes only the prompt tokens its place did not hold
    (``simulator/prompt_cache.py``), which the plan cannot know before the run."""
    out = {}
    for s in live:
        done, cached = stats[s.name]["completed"], stats[s.name].get("cached_tokens", 0)
        spared = cached / done / default_latency(s).prompt_tps / speed if done else 0.0
        out[s.name] = mean_latency[s.name] - spared
    return out


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
            # Sequences answered, and the requests that carried them (fewer where the samples
            # of one prompt went as one request with n choices).
            "completed": stats[s.name]["completed"],
            "requests": stats[s.name]["requests"],
            "mean_latency_s": round(mean_latency[s.name], 4),
            "mean_request_s": round(busy / n, 4) if n else None,
            "busy_share": round(busy / (s.parallel * seconds), 3) if seconds > 0 else None,
        }
    return rows


def get_json(url: str) -> Any:
    """One GET of a local JSON endpoint (the simulator's ``/_sim/stats``)."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


@contextlib.asynccontextmanager
async def subprocess_simulator(
    slot_file: SlotFile, profile: str, speed: float, workdir: Path
) -> AsyncIterator[SlotFile]:
    """The slot simulator in a process of its own; yields the slot file of its live servers."""
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


async def simulator_stats(live_file: SlotFile, profile: str) -> dict[str, Any]:
    """What the simulator counted per live slot (``max_in_flight``, ``completed``)."""
    return {
        s.name: await asyncio.to_thread(get_json, s.base_url.removesuffix("/v1") + "/_sim/stats")
        for s in live_file.live_slots(profile)
    }


__all__ = [
    "BENCH_TEXT",
    "bench_task",
    "charged_latency",
    "get_json",
    "plan",
    "request_seconds",
    "simulated_latency_s",
    "simulator_stats",
    "slot_rows",
    "subprocess_simulator",
]
