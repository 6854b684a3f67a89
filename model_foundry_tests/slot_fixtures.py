"""Helpers for the slot tests: slot files, fast dispatcher options, a child-process dispatcher.

Run as ``python -m model_foundry_tests.slot_fixtures --slots F --role R --count N --lock-dir D``
to dispatch N tasks from a separate process (the cross-process limit test).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import sys
import time
import urllib.request
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import (
    SHIPPED_SLOT_FILE,
    Slot,
    SlotFile,
    load_slot_file,
    parse_slot_file,
)
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions, RetryPolicy, Task, run_dispatch

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from a plain pytest test (no pytest-asyncio needed)."""
    return asyncio.run(coro)


def shipped_data() -> dict[str, Any]:
    return yaml.safe_load(SHIPPED_SLOT_FILE.read_text(encoding="utf-8"))


def shipped_slot_file() -> SlotFile:
    return load_slot_file(SHIPPED_SLOT_FILE)


def slot_file_from(data: dict[str, Any], source: str = "test-slots.yaml") -> SlotFile:
    return parse_slot_file(copy.deepcopy(data), source=source)


def write_yaml(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def bad_slot_file(path: Path) -> tuple[Path, str]:
    """The shipped slot file with naughty's ``parallel`` at 0, written to ``path``, and the
    one sentence it gets."""
    data = shipped_data()
    data["slots"]["naughty"]["parallel"] = 0
    write_yaml(path, data)
    sentence = f"{path}: slots.naughty.parallel: must be >= 1"
    return path, sentence


def fast_options(lock_dir: Path, **overrides: Any) -> DispatchOptions:
    """Small backoffs and timeouts so failure tests take fractions of a second."""
    retry = overrides.pop(
        "retry", RetryPolicy(max_attempts=4, backoff_base_s=0.01, backoff_max_s=0.05)
    )
    base: dict[str, Any] = {
        "retry": retry,
        "failures_before_cooldown": 3,
        "cooldown_s": 0.2,
        "stop_error_share": 1.0,
        "min_attempts_before_stop": 10,
        "request_timeout_s": 10.0,
        "lock_dir": lock_dir,
        "token_poll_s": 0.005,
    }
    base.update(overrides)
    return DispatchOptions(**base)


def chat_tasks(
    role: str, count: int, prefix: str = "t", words: str = "alpha beta gamma"
) -> list[Task]:
    return [
        Task(
            key=f"{prefix}-{role}-{i}",
            task="test",
            role=role,
            # A text body: one user turn on a chat slot, the text to translate on plamo.
            body=Body(text=f"{words} {i}"),
        )
        for i in range(count)
    ]


def wait_at_barrier(barrier: Path, name: str, timeout_s: float = 60.0) -> None:
    """Say ``<name>.ready`` in ``barrier`` and wait for ``go``, so child processes overlap."""
    (barrier / f"{name}.ready").touch()
    deadline = time.monotonic() + timeout_s
    while not (barrier / "go").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no go signal in {barrier}")
        time.sleep(0.005)


async def release_barrier(barrier: Path, names: list[str], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not all((barrier / f"{n}.ready").exists() for n in names):
        if time.monotonic() > deadline:
            raise TimeoutError(f"children did not reach the barrier in {barrier}")
        await asyncio.sleep(0.01)
    (barrier / "go").touch()


def _child_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--slots", type=Path, required=True)
    p.add_argument("--profile", default="standard")
    p.add_argument("--role", required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--prefix", default="child")
    p.add_argument("--lock-dir", type=Path, required=True)
    p.add_argument("--barrier", type=Path, default=None, help="start together: see wait_at_barrier")
    args = p.parse_args(argv)
    slot_file = load_slot_file(args.slots)
    if args.barrier:
        # The transport loads with the first request; load it before the barrier, so that
        # the children start sending together rather than each after its own import.
        import aiohttp  # noqa: F401

        wait_at_barrier(args.barrier, args.prefix)
    result = run_dispatch(
        chat_tasks(args.role, args.count, prefix=args.prefix),
        slot_file,
        args.profile,
        options=fast_options(args.lock_dir),
    )
    print(json.dumps(result.summary()))
    return 0 if result.error_count == 0 else 1


if __name__ == "__main__":
    raise SystemExit(_child_main(sys.argv[1:]))


@dataclass
class Slots:
    """Where a test's LLM run finds its slots (an ``LlmRun`` slot source): a slot file, fast
    retries, the test's own lock folder."""

    path: Path
    lock_dir: Path
    profile: str | None = None

    def load(self) -> SlotFile:
        return load_slot_file(self.path)

    def context_book(self, slot_file: SlotFile) -> ContextBook:
        return ContextBook(slot_file.live_slots(self.profile))

    def dispatch_options(self) -> DispatchOptions:
        return fast_options(self.lock_dir)


def set_faults(slot: Slot, **faults: Any) -> None:
    """Change a simulated slot's faults (the simulator's ``/_sim/faults``)."""
    request = urllib.request.Request(
        f"{slot.base_url.removesuffix('/v1')}/_sim/faults",
        data=json.dumps(faults).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def requests_served(slot_path: Path) -> int:
    """Chat requests every simulated slot of ``slot_path`` has answered so far."""
    total = 0
    for slot in load_slot_file(slot_path).slots.values():
        url = slot.base_url.removesuffix("/v1") + "/_sim/stats"
        with urllib.request.urlopen(url, timeout=10) as response:
            total += json.load(response)["requests"]
    return total
