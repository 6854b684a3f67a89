"""The dispatcher against the simulator over real HTTP: limits, fullness, failures, the bench:
the system tests."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from model_foundry.devtools.simulator import (
    SlotSimulator,
)
from model_foundry_tests.shared.lib.slots.dispatcher import (
    ROOT,
    _latency,
)
from model_foundry_tests.slot_fixtures import (
    release_barrier,
    run,
    shipped_slot_file,
)

# ---------------------------------------------------------------------------------------------
# Pure pieces


# ---------------------------------------------------------------------------------------------
# Over HTTP


def test_two_processes_never_exceed_parallel_on_one_slot(tmp_path: Path) -> None:
    async def go(shared_locks: bool) -> dict:
        # ~0.15 s per request, 3 waves per process; the barrier makes both start together.
        async with SlotSimulator(
            shipped_slot_file(), free_ports=True, latency=_latency(30.0)
        ) as sim:
            live = sim.write_slot_file(tmp_path / "live.yaml")
            barrier = tmp_path / f"barrier-{shared_locks}"
            barrier.mkdir()
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            names = ["p0", "p1"]
            procs = [
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "model_foundry_tests.slot_fixtures",
                    "--slots",
                    str(live),
                    "--role",
                    "naughty",
                    "--count",
                    "9",
                    "--prefix",
                    name,
                    "--barrier",
                    str(barrier),
                    "--lock-dir",
                    str(tmp_path / ("locks" if shared_locks else f"locks-{name}")),
                    env=env,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                for name in names
            ]
            await release_barrier(barrier, names)
            outs = [await asyncio.wait_for(p.communicate(), 60) for p in procs]
            for p, (out, err) in zip(procs, outs, strict=True):
                assert p.returncode == 0, err.decode()[-2000:]
                assert json.loads(out)["tasks_ok"] == 9
            return sim.stats()["naughty"]

    stats = run(go(shared_locks=True))
    assert stats["completed"] == 18
    assert stats["max_in_flight"] == 3  # naughty's parallel, across both processes
    # Control: with separate lock directories nothing coordinates them, and the slot overflows.
    stats = run(go(shared_locks=False))
    assert stats["max_in_flight"] > 3
