"""SlotLimiter.in_flight(): places held by any process, read without taking one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from model_foundry.lib.slots.limiter import SlotLimiter

HOLDER = """
import sys
from pathlib import Path
from model_foundry.lib.slots.limiter import SlotLimiter
lim = SlotLimiter("naughty", 3, Path(sys.argv[1]))
held = [lim.try_acquire(), lim.try_acquire()]
print("held", held, flush=True)
sys.stdin.read()
"""


def test_in_flight_counts_every_process_and_the_kernel_frees_a_dead_ones(tmp_path: Path) -> None:
    ours = SlotLimiter("naughty", 3, tmp_path)
    assert ours.in_flight() == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().startswith("held [0, 1]")
        watcher = SlotLimiter("naughty", 3, tmp_path)
        assert watcher.in_flight() == 2
        token = ours.try_acquire()
        assert token == 2
        assert watcher.in_flight() == 3
        assert ours.try_acquire() is None  # reading took no place: all three are held
        ours.release(token)
        assert watcher.in_flight() == 2
    finally:
        holder.kill()
        holder.wait()
    assert SlotLimiter("naughty", 3, tmp_path).in_flight() == 0
    # Another slot's files are not counted.
    assert SlotLimiter("kindergarten", 5, tmp_path).in_flight() == 0
