"""Choosing the slot limiter, the flock fallback, and the dispatcher on NATS leases."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from nats.js.errors import BucketNotFoundError, KeyNotFoundError

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.ports import free_port
from model_foundry.devtools.simulator import LatencyModel, SlotSimulator
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.slots.dispatcher import dispatch
from model_foundry.lib.slots.leases import LeaseSettings, LeaseValue
from model_foundry.lib.slots.limiter import (
    LimiterChoice,
    SlotLimiterUnavailableError,
    open_limiter,
)
from model_foundry_tests.slot_fixtures import (
    chat_tasks,
    fast_options,
    run,
    shipped_data,
    slot_file_from,
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalNatsServer]:
    with LocalNatsServer(store_dir=tmp_path / "nats") as s:
        yield s


def test_auto_falls_back_to_flock_when_nats_is_unreachable(tmp_path: Path) -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    nats_res = NatsClient(servers=url, connect_timeout_s=0.3)

    async def go() -> tuple[str, str | None]:
        choice = LimiterChoice(kind="auto", nats=nats_res, lock_dir=tmp_path)
        async with open_limiter(choice, {"s": 1}) as (lim, fallback):
            return lim.kind, fallback

    kind, fallback = run(go())
    assert kind == "flock"
    assert fallback is not None and url in fallback


def test_nats_on_demand_is_one_sentence_when_unreachable(tmp_path: Path) -> None:
    url = f"nats://user:s3cret@127.0.0.1:{free_port()}"

    async def go(choice: LimiterChoice) -> None:
        async with open_limiter(choice, {"s": 1}):
            pass

    res = NatsClient(servers=url, connect_timeout_s=0.3)
    with pytest.raises(SlotLimiterUnavailableError) as err:
        run(go(LimiterChoice(kind="nats", nats=res, lock_dir=tmp_path)))
    message = str(err.value)
    assert "s3cret" not in message and "MODEL_FOUNDRY_SLOT_LIMITER=flock" in message
    assert "\n" not in message
    with pytest.raises(SlotLimiterUnavailableError, match="NATS_URL"):
        run(go(LimiterChoice(kind="nats", nats=None, lock_dir=tmp_path)))


def test_dispatch_on_nats_leases_says_so_and_counts_kv_operations(
    server: LocalNatsServer, tmp_path: Path
) -> None:
    async def go() -> tuple[dict, dict]:
        sf = slot_file_from(shipped_data())
        async with SlotSimulator(
            sf, free_ports=True, latency=LatencyModel(prompt_tps=1e5, gen_tps=60.0)
        ) as sim:
            options = fast_options(tmp_path / "locks", nats=NatsClient(servers=server.url))
            result = await dispatch(chat_tasks("naughty", 12), sim.slot_file, options=options)
            return result.summary(), sim.stats()["naughty"]

    summary, stats = run(go())
    assert summary["tasks_ok"] == 12
    limiter = summary["limiter"]
    assert limiter["kind"] == "nats"
    assert server.url in limiter["where"]
    assert limiter["requests"] == 12
    # One worker keeps its place across consecutive requests: far fewer than 2 per request.
    assert 0 < limiter["kv_ops_per_request"] < 2
    assert stats["max_in_flight"] == 3


def test_a_request_whose_lease_is_taken_over_is_cancelled_and_retried(
    server: LocalNatsServer, tmp_path: Path
) -> None:
    """Someone else's lease appears on our place mid-request: the request stops at once."""
    data = shipped_data()
    data["slots"]["naughty"]["parallel"] = 1
    sf = slot_file_from(data)
    lease = LeaseSettings(ttl_s=1.0, renew_every_s=0.25)

    async def intruder(url: str) -> None:
        nc = await nats.connect(url)
        while True:  # until the dispatcher has created the bucket and taken the place
            try:
                kv = await nc.jetstream().key_value(lease.bucket)
                entry = await kv.get("naughty.0")
            except (BucketNotFoundError, KeyNotFoundError):
                entry = None
            if entry is not None and entry.value:
                break
            await asyncio.sleep(0.02)
        foreign = LeaseValue("elsewhere:1:x", "foreign", None, 0.0, 0.0, 0.0)
        await kv.update("naughty.0", foreign.encode(), last=entry.revision)
        await nc.close()

    async def go() -> tuple[dict, list[str], int]:
        # ~1.6 s per request, so the takeover lands while the first one is in flight.
        async with SlotSimulator(
            sf, free_ports=True, latency=LatencyModel(prompt_tps=1e5, gen_tps=4.0)
        ) as sim:
            options = fast_options(
                tmp_path / "locks", nats=NatsClient(servers=server.url), lease=lease
            )
            takeover = asyncio.create_task(intruder(server.url))
            result = await dispatch(chat_tasks("naughty", 2), sim.slot_file, options=options)
            await takeover
            errors = [a.error_class or "" for a in result.attempts if not a.ok]
            return result.summary(), errors, sim.stats()["naughty"]["max_in_flight"]

    summary, errors, max_in_flight = run(go())
    assert errors == ["SlotLeaseLost"]
    assert summary["tasks_ok"] == 2
    assert summary["limiter"]["kv_ops"]["lost"] == 1
    # The intruder's lease was never renewed, so the place came back after the ttl.
    assert summary["limiter"]["kv_ops"]["steals"] == 1
    assert max_in_flight == 1
    json.dumps(summary)  # plain data, fit for run metadata


def test_the_metrics_exporter_reads_every_workers_leases_from_its_own_threads(
    server: LocalNatsServer,
) -> None:
    """``LeaseSlotPlaces``: what the exporter asks (in flight against parallel) under NATS."""
    from model_foundry.lib.slots.leases import NatsLeaseLimiter
    from model_foundry.lib.slots.limiter import LeaseSlotPlaces

    places = LeaseSlotPlaces.open(NatsClient(servers=server.url), {"s": 3})
    try:

        async def hold_two_then_release(seen: list[int]) -> None:
            nc = await nats.connect(server.url)
            worker = await NatsLeaseLimiter(nc, {"s": 3}).start()
            held = [await worker.acquire("s"), await worker.acquire("s")]
            for _ in range(200):  # the exporter's thread sees the watch's update shortly
                if places.in_flight("s") == 2:
                    break
                await asyncio.sleep(0.02)
            seen.append(places.in_flight("s"))
            for lease in held:
                assert lease is not None
                await worker.release(lease)
            await worker.close()
            await nc.close()

        seen: list[int] = []
        run(hold_two_then_release(seen))
        assert seen == [2]
        assert places.parallel("s") == 3
    finally:
        places.close()
