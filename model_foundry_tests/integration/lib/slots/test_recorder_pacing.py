"""A batched recorder paced while work is queued: attempts that settle within ``every_s``
of the last call are written by one call; nothing waits when the queue is empty or the batch
closes. Integration: it times real waits."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.dispatcher.progress import Progress
from model_foundry.lib.slots.dispatcher.recorder import InBatches, Recorder


def attempt(i: int) -> Attempt:
    return Attempt(f"k{i}", "t", "worker", "s", "m", "vllm", "ok")


def _paced(more_work: bool) -> tuple[list[list[str]], float]:
    """Five attempts settling 20 ms apart, recorded with ``every_s`` 0.2 while ``more_work``
    says work is queued; the calls and how long the last attempt waited for its record."""
    calls: list[list[str]] = []
    waited: list[float] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()

        def record(attempts: Sequence[Attempt]) -> None:
            calls.append([a.key for a in attempts])
            waited.append(loop.time())

        recorder = Recorder(
            InBatches(record), in_thread=False, progress=Progress(None),
            every_s=0.2, more_work=lambda: more_work,
        )  # fmt: skip
        task = asyncio.create_task(recorder.run())
        for i in range(5):
            recorder.put(attempt(i))
            settled = loop.time()
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        waited[-1] -= settled
        recorder.close()
        await task

    asyncio.run(scenario())
    return calls, waited[-1]


def test_with_work_queued_records_wait_so_that_one_call_writes_several() -> None:
    calls, _ = _paced(more_work=True)
    # The first at once, the rest together once 0.2 s have passed since the first call.
    assert calls == [["k0"], ["k1", "k2", "k3", "k4"]]


def test_with_nothing_queued_each_settled_attempt_is_recorded_at_once() -> None:
    calls, waited = _paced(more_work=False)
    assert calls == [[f"k{i}"] for i in range(5)]
    assert waited < 0.05


def test_closing_ends_the_wait_for_the_last_records() -> None:
    calls: list[list[str]] = []

    async def scenario() -> float:
        recorder = Recorder(
            InBatches(lambda attempts: calls.append([a.key for a in attempts])),
            in_thread=False, progress=Progress(None), every_s=30.0, more_work=lambda: True,
        )  # fmt: skip
        task = asyncio.create_task(recorder.run())
        recorder.put(attempt(0))
        await asyncio.sleep(0.01)
        recorder.put(attempt(1))
        started = asyncio.get_running_loop().time()
        recorder.close()
        await task
        return asyncio.get_running_loop().time() - started

    took = asyncio.run(scenario())
    assert calls == [["k0"], ["k1"]] and took < 1.0
