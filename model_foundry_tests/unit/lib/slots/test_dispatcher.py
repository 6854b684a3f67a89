"""The dispatcher against the simulator over real HTTP: limits, fullness, failures, the bench:
the unit tests."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from model_foundry.devtools.bench.slot_common import plan
from model_foundry.devtools.bench.slot_workers import worker_share
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import NoSlotForRoleError, Slot
from model_foundry.lib.slots.dispatcher import (
    RetryPolicy,
    Router,
    Task,
    WorkQueue,
    run_dispatch,
)
from model_foundry.lib.slots.dispatcher.routing import Pending
from model_foundry.lib.slots.dispatcher.worker import send
from model_foundry.lib.slots.limiter import SlotLimiter
from model_foundry.lib.slots.request import build_request, render
from model_foundry_tests.slot_fixtures import (
    chat_tasks,
    fast_options,
    shipped_data,
    shipped_slot_file,
    slot_file_from,
)

# ---------------------------------------------------------------------------------------------
# Pure pieces


def test_router_moves_work_to_the_next_tier_while_a_slot_cools_down() -> None:
    r = Router(
        {"worker": [["naughty"], ["kindergarten"]], "summary": [["kindergarten"], ["naughty"]]}
    )
    assert r.roles_for("naughty", now=0) == ["worker"]
    assert r.roles_for("kindergarten", now=0) == ["summary"]
    r.cool_down("naughty", until=10)
    assert r.roles_for("naughty", now=5) == []
    assert sorted(r.roles_for("kindergarten", now=5)) == ["summary", "worker"]
    assert r.next_change(now=5) == 10
    assert r.roles_for("naughty", now=11) == ["worker"]
    r.cool_down("kindergarten", until=20)
    r.cool_down("naughty", until=20)
    assert r.active_tier("worker", now=15) == []  # everything cooling: work waits


def test_a_growing_batch_adds_a_narrowed_route_only_over_slots_it_has_workers_on() -> None:
    r = Router({"worker": [["naughty"], ["kindergarten"]]})
    r.add_routes({"worker@naughty": [["naughty"]]})
    assert r.roles_for("naughty", now=0) == ["worker", "worker@naughty"]
    assert r.roles_for("kindergarten", now=0) == []
    with pytest.raises(ValueError, match="no workers on"):
        r.add_routes({"judge": [["grandpa"]]})


def test_work_queue_is_fifo_and_holds_retries_until_ready() -> None:
    q = WorkQueue()
    for t in chat_tasks("a", 3):
        q.add(t)
    first = q.take(["a"], now=0)
    assert first is not None and first.task.key == "t-a-0"
    q.requeue(first, ready_at=5.0)
    assert q.take(["a"], now=1).task.key == "t-a-1"
    assert q.next_ready(["a"]) == 5.0
    # Once ready, the retry (older) goes before younger fresh tasks.
    assert q.take(["a"], now=6).task.key == "t-a-0"
    assert len(q) == 1 and q.drain_keys() == ["t-a-2"] and len(q) == 0


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    p = RetryPolicy(backoff_base_s=1.0, backoff_max_s=8.0, jitter=0.5)
    rng = random.Random(1)
    for failed, cap in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        d = p.delay(failed, rng)
        assert cap * 0.5 <= d <= cap


def test_limiter_tokens_are_exclusive_across_open_files(tmp_path: Path) -> None:
    a, b = SlotLimiter("s", 2, tmp_path), SlotLimiter("s", 2, tmp_path)
    t1, t2 = a.try_acquire(), b.try_acquire()
    assert {t1, t2} == {0, 1}
    assert a.try_acquire() is None and b.try_acquire() is None
    a.release(t1)
    assert b.try_acquire() == t1
    a.close()
    b.close()


# ---------------------------------------------------------------------------------------------
# Over HTTP


def test_misconfigured_batches_fail_before_sending(tmp_path: Path) -> None:
    sf = shipped_slot_file()
    with pytest.raises(NoSlotForRoleError, match="unknown role 'poet'"):
        run_dispatch(chat_tasks("poet", 1), sf, "standard", options=fast_options(tmp_path))
    data = shipped_data()
    data["profiles"]["minimal"] = ["naughty"]
    with pytest.raises(NoSlotForRoleError, match="no live slot can serve role 'translation'"):
        run_dispatch(
            chat_tasks("translation", 1),
            slot_file_from(data),
            "minimal",
            options=fast_options(tmp_path),
        )
    with pytest.raises(ValueError, match="duplicate task key"):
        run_dispatch(chat_tasks("naughty", 1) * 2, sf, "standard", options=fast_options(tmp_path))


def test_bench_workers_each_get_a_share_of_every_slot() -> None:
    tasks, _ = plan(shipped_slot_file(), "standard", 500, 2.0)
    shares = [worker_share(tasks, i, 3) for i in range(3)]
    assert sorted(t.key for s in shares for t in s) == sorted(t.key for t in tasks)
    per_slot = {t.role for t in tasks}
    for slot in per_slot:
        counts = [sum(1 for t in s if t.role == slot) for s in shares]
        total = sum(1 for t in tasks if t.role == slot)
        # Dealt evenly, slot by slot (the plain round-robin over the interleaved list gave
        # one worker all 51 translator prompts and the others none).
        assert max(counts) - min(counts) <= 1, (slot, counts)
        assert sum(counts) == total


def test_a_worker_sends_the_rendering_fitting_counted_with_its_pin() -> None:
    """A task carries its rendering for the slots fitting counted it on: the worker sends
    that one, pinned, and leaves another slot to render the task itself."""
    sf = shipped_slot_file()
    naughty = sf.slots["naughty"]
    body, params = Body(messages=[{"role": "user", "content": "hi"}]), {"top_k": 20}
    task = Task(
        "k", "t", "worker", body, params, rendered={"naughty": render(naughty, body, params)}
    )

    class Client:
        def __init__(self, slot: Slot) -> None:
            self.slot, self.asked = slot, {}

        async def run_choices(self, **asked: Any) -> list[Attempt]:
            self.asked = asked
            return [Attempt("k", "t", "worker", self.slot.name, "m", "llamacpp", "ok", content="x")]

    pin = {"id_slot": 1}
    sent = {}
    for slot in (naughty, sf.slots["kindergarten"]):
        client = Client(slot)
        item = Pending(0.0, 0, task)
        asyncio.run(send(client, [item], asyncio.Event(), None, pin))  # type: ignore[arg-type]
        sent[slot.name] = client.asked["rendered"]
    assert sent["naughty"].kwargs == build_request(naughty, body, {**params, **pin})
    assert sent["kindergarten"] is None  # not counted there: it renders the task itself
