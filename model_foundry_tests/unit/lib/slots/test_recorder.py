"""The recorder hands attempts to ``on_attempt`` in order; ``InBatches`` gets those that
settled while its last call ran in one call (one transaction in the completions store); a
growing one hands back the tasks those attempts made ready."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.dispatcher.progress import Progress
from model_foundry.lib.slots.dispatcher.recorder import InBatches, Recorder
from model_foundry.lib.slots.dispatcher.tasks import Task


def attempt(i: int) -> Attempt:
    return Attempt(f"k{i}", "t", "worker", "s", "m", "vllm", "ok")


def test_attempts_that_settle_during_a_write_are_written_together_in_order() -> None:
    calls: list[list[str]] = []

    async def scenario() -> None:
        gate = asyncio.Event()

        async def record(attempts: Sequence[Attempt]) -> None:
            calls.append([a.key for a in attempts])
            if len(calls) == 1:
                await gate.wait()  # the first write waits for the file

        recorder = Recorder(InBatches(record), in_thread=False, progress=Progress(None))
        task = asyncio.create_task(recorder.run())
        recorder.put(attempt(0))
        await asyncio.sleep(0)
        for i in range(1, 5):  # settle while the first write waits
            recorder.put(attempt(i))
        gate.set()
        recorder.close()
        await task

    asyncio.run(scenario())
    assert calls == [["k0"], ["k1", "k2", "k3", "k4"]]


def test_a_plain_callback_still_sees_one_attempt_at_a_time() -> None:
    seen: list[str] = []

    async def scenario() -> None:
        recorder = Recorder(lambda a: seen.append(a.key), in_thread=False, progress=Progress(None))
        for i in range(3):
            recorder.put(attempt(i))
        recorder.close()
        await recorder.run()

    asyncio.run(scenario())
    assert seen == ["k0", "k1", "k2"]


def test_a_failed_write_stops_the_batch_and_records_nothing_after_it() -> None:
    calls: list[int] = []

    def record(attempts: Sequence[Attempt]) -> None:
        calls.append(len(attempts))
        raise OSError("disk full")

    async def scenario() -> Recorder:
        progress = Progress(None)
        recorder = Recorder(InBatches(record), in_thread=False, progress=progress)
        recorder.put(attempt(0))
        recorder.put(attempt(1))
        recorder.close()
        await recorder.run()
        assert progress.stopping
        return recorder

    recorder = asyncio.run(scenario())
    assert calls == [2]
    assert isinstance(recorder.error, OSError)


def test_a_growing_recorder_hands_the_new_tasks_to_the_batch_after_the_write() -> None:
    added: list[list[str]] = []
    counts: list[int] = []

    def record(attempts: Sequence[Attempt]) -> list[Task]:
        # What is recorded is still counted while its record runs: the batch may not end.
        counts.append(recorder.unrecorded)
        return [Task(f"next-{a.key}", "t", "worker", Body(text="x")) for a in attempts]

    recorder = Recorder(InBatches(record, grows=True), in_thread=False, progress=Progress(None))
    recorder.on_new = lambda tasks: added.append([t.key for t in tasks])

    async def scenario() -> None:
        recorder.put(attempt(0))
        recorder.put(attempt(1))
        recorder.close()
        await recorder.run()

    asyncio.run(scenario())
    assert recorder.grows and counts == [2]
    assert added == [["next-k0", "next-k1"]] and recorder.unrecorded == 0


def test_a_recorder_that_does_not_grow_ignores_what_its_callback_returns() -> None:
    added: list[Sequence[Task]] = []
    recorder = Recorder(
        InBatches(lambda attempts: [Task("x", "t", "worker", Body(text="x"))]),
        in_thread=False,
        progress=Progress(None),
    )
    recorder.on_new = added.append
    recorder.put(attempt(0))
    recorder.close()
    asyncio.run(recorder.run())
    assert not recorder.grows and added == []
