"""Families in the dispatcher's queue (``routing.WorkQueue``): which task each place takes
when tasks share a prompt prefix, checked on the queue alone, place by place."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from model_foundry.devtools.simulator.queue import SlotQueue
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.client import SlotClient
from model_foundry.lib.slots.dispatcher import DispatchOptions, Task, WorkQueue
from model_foundry.lib.slots.dispatcher.batch import Batch
from model_foundry.lib.slots.dispatcher.routing import Pending, PlaceId
from model_foundry.lib.slots.dispatcher.worker import SlotWorker
from model_foundry_tests.slot_fixtures import chat_tasks, shipped_slot_file


def task(key: str, family: str | None, role: str = "r") -> Task:
    return Task(key=key, task="t", role=role, body=Body(text=key), family=family)


def samples(prompts: int, k: int, role: str = "r") -> list[Task]:
    """``k`` samples of each of ``prompts`` prompts, queued prompt after prompt."""
    return [task(f"p{p}-s{s}", f"p{p}", role) for p in range(prompts) for s in range(k)]


def queue(tasks: list[Task], *, families: bool = True) -> WorkQueue:
    q = WorkQueue(families=families)
    for t in tasks:
        q.add(t)
    return q


def run(q: WorkQueue, places: int, slot: str = "s") -> list[list[tuple[PlaceId, Pending]]]:
    """Every place takes a task in turn, all taking requests of one unit of time: each wave is
    what ran at once. Asserts that no place asks in vain while work waits."""
    waves = []
    while len(q):
        wave = []
        for i in range(places):
            before = len(q)
            item = q.take(["r"], 0.0, (slot, i))
            assert (item is None) == (before == 0), "a place idled while work waited"
            if item is not None:
                wave.append(((slot, i), item))
        waves.append(wave)
    return waves


def family(item: Pending) -> str | None:
    return item.task.family


def test_off_the_queue_keeps_one_line_in_order() -> None:
    tasks = samples(3, 4)
    q = queue(tasks, families=False)
    taken = [q.take(["r"], 0.0, ("s", i % 2)) for i in range(len(tasks))]
    assert [t.task.key for t in taken if t] == [t.key for t in tasks]
    assert q.take(["r"], 0.0, ("s", 0)) is None


def test_each_family_starts_with_one_member_and_its_place_runs_the_rest() -> None:
    # 4 prompts x 4 samples on 4 places: each place takes one prompt's first sample, then
    # that prompt's other samples, one after another.
    waves = run(queue(samples(4, 4)), places=4)
    assert len(waves) == 4 and all(len(w) == 4 for w in waves)
    first = waves[0]
    assert sorted(family(item) for _, item in first) == ["p0", "p1", "p2", "p3"]
    for place, item in first:
        later = [it for wave in waves[1:] for p, it in wave if p == place]
        assert {family(it) for it in later} == {family(item)}
    # Never two members of one family at once: each ran after the one before it.
    for wave in waves:
        fams = [family(it) for _, it in wave]
        assert len(fams) == len(set(fams))


def test_a_place_with_nothing_else_takes_a_member_of_the_largest_family() -> None:
    # 2 prompts x 4 samples on 3 places: the third place has no prompt of its own, and rather
    # than idle it takes a member of a family another place holds, and is then its home too.
    waves = run(queue(samples(2, 4)), places=3)
    assert [len(w) for w in waves] == [3, 3, 2]
    ((_, stolen),) = [(p, it) for p, it in waves[0] if p == ("s", 2)]
    assert stolen.task.key == "p0-s1"
    later = [it for wave in waves[1:] for p, it in wave if p == ("s", 2)]
    assert later and {family(it) for it in later} <= {"p0", "p1"}
    keys = sorted(it.task.key for wave in waves for _, it in wave)
    assert keys == sorted(t.key for t in samples(2, 4))


def test_other_work_goes_before_members_a_place_has_no_prefix_for() -> None:
    tasks = [*samples(1, 3), task("solo-0", None), task("solo-1", None)]
    q = queue(tasks)
    # Place 0 takes the family's first member; place 1 takes the plain tasks first.
    assert q.take(["r"], 0.0, ("s", 0)).task.key == "p0-s0"
    assert q.take(["r"], 0.0, ("s", 1)).task.key == "solo-0"
    assert q.take(["r"], 0.0, ("s", 0)).task.key == "p0-s1"
    assert q.take(["r"], 0.0, ("s", 1)).task.key == "solo-1"
    # Nothing else waits: place 1 takes a member rather than idle.
    assert q.take(["r"], 0.0, ("s", 1)).task.key == "p0-s2"
    assert len(q) == 0 and q.peek(["r"], 0.0) is None


def test_peek_sees_waiting_members_and_drain_returns_them() -> None:
    q = queue(samples(1, 3))
    assert q.take(["r"], 0.0, ("s", 0)).task.key == "p0-s0"
    assert len(q) == 2
    # Another slot's worker sees the members (it may take one rather than idle).
    assert q.peek(["r"], 0.0).task.key == "p0-s1"
    assert q.peek(["other"], 0.0) is None
    assert q.drain_keys() == ["p0-s1", "p0-s2"] and len(q) == 0


def test_families_of_different_routes_stay_apart() -> None:
    q = queue([task("a0", "f", "a"), task("b0", "f", "b"), task("a1", "f", "a")])
    assert q.take(["a"], 0.0, ("s", 0)).task.key == "a0"
    assert q.take(["b"], 0.0, ("s", 0)).task.key == "b0"
    assert q.take(["a"], 0.0, ("s", 0)).task.key == "a1"


def test_a_retried_member_waits_for_its_time_and_the_home_goes_on() -> None:
    q = queue(samples(1, 3))
    lead = q.take(["r"], 0.0, ("s", 0))
    q.requeue(lead, ready_at=5.0)
    assert q.take(["r"], 1.0, ("s", 0)).task.key == "p0-s1"
    assert q.take(["r"], 1.0, ("s", 0)).task.key == "p0-s2"
    assert q.take(["r"], 1.0, ("s", 0)) is None
    assert q.take(["r"], 6.0, ("s", 0)).task.key == "p0-s0"


def test_prefill_in_a_queue_model_of_llama_cpp_places() -> None:
    """Each place's cache holds the prompt it ran last: families on compute each prompt about
    once per place it ran on, off (the line in order over 4 places) once per sample."""
    tasks = samples(8, 4)

    def computed(q: WorkQueue) -> int:
        held: dict[PlaceId, str | None] = {}
        n = 0
        for wave in run(q, places=4):
            for place, item in wave:
                n += held.get(place) != family(item)
                held[place] = family(item)
        return n

    on, off = computed(queue(tasks)), computed(queue(tasks, families=False))
    assert off == len(tasks)
    assert on == 8  # every prompt once: 8 families on 4 places, none left to share


def _worker(slot: str, families: bool) -> SlotWorker:
    sf = shipped_slot_file()
    batch = SimpleNamespace(options=DispatchOptions(families=families), pins=families)
    # The client and limiter are only kept here, never used: no connection is made.
    return SlotWorker(batch, sf.slots[slot], SlotClient(sf.slots[slot]), limiter=None)  # type: ignore[arg-type]


def test_llama_cpp_requests_name_their_places_server_slot_and_vllm_ones_do_not() -> None:
    assert _worker("kindergarten", True)._pin(2) == {"id_slot": 2}  # llama.cpp
    assert _worker("naughty", True)._pin(2) == {}  # vLLM: one shared cache
    assert _worker("kindergarten", False)._pin(2) == {}  # off: the server chooses
    assert _worker("kindergarten", True)._pin(None) == {}


def test_only_a_batch_with_families_names_server_slots() -> None:
    sf = shipped_slot_file()
    plain = Batch(chat_tasks("kindergarten", 2), sf, "standard", None, DispatchOptions())
    assert not plain.pins
    mixed = [*chat_tasks("kindergarten", 2), task("f0", "f", "kindergarten")]
    assert Batch(mixed, sf, "standard", None, DispatchOptions(families=True)).pins
    assert not Batch(mixed, sf, "standard", None, DispatchOptions(families=False)).pins


def test_the_simulator_runs_a_pinned_request_in_its_server_slot_once_free() -> None:
    async def go() -> list[int]:
        q = SlotQueue(3)
        order: list[int] = []
        started = asyncio.Event()
        async with q.processing(pinned=1) as (first,):
            order.append(first)
            # 4 wraps around to server slot 1, busy: the request waits in the queue.
            waiting = asyncio.ensure_future(_take(q, 4, started))
            await started.wait()
            async with q.processing() as (other,):
                order.append(other)  # an unpinned request takes a free one meanwhile
            assert not waiting.done() and q.free_ids == [2, 0]
        order.append(await waiting)
        return order

    assert asyncio.run(go()) == [1, 0, 1]


async def _take(q: SlotQueue, pinned: int, started: asyncio.Event) -> int:
    started.set()
    async with q.processing(pinned=pinned) as (got,):
        return got
