"""Choosing the slot limiter, the flock fallback, and the dispatcher on NATS leases: the unit
tests."""

from __future__ import annotations

from pathlib import Path

from model_foundry.lib.slots.limiter import (
    FlockLimiter,
)
from model_foundry_tests.slot_fixtures import (
    run,
)


def test_flock_in_flight_is_read_without_taking_a_lock(tmp_path: Path) -> None:
    async def go() -> tuple[int, int, int]:
        worker = FlockLimiter({"s": 3}, tmp_path)
        exporter = FlockLimiter({"s": 3}, tmp_path)
        held = [await worker.acquire("s", lambda: False) for _ in range(2)]
        during = exporter.in_flight("s")
        # Reading did not take a file: the worker can still take the third place.
        third = await worker.acquire("s", lambda: True)
        for h in [*held, third]:
            assert h is not None
            await worker.release(h)
        after = exporter.in_flight("s")
        await worker.close()
        await exporter.close()
        return during, after, exporter.parallel("s")

    assert run(go()) == (2, 0, 3)
