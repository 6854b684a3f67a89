"""Context windows, fit routing and chunking without a real model server: the integration
tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import duckdb

from model_foundry.devtools.simulator import SlotSimulator
from model_foundry.lib.llm import CompletionBatch, CompletionStore, Request
from model_foundry.lib.llm.answer import answer
from model_foundry.lib.llm.request import fit, plan
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.context import (
    ContextBook,
)
from model_foundry.lib.slots.dispatcher import Task, dispatch
from model_foundry.lib.slots.fit import PROMPT_TOO_LONG, fit_request, surely_fits
from model_foundry.lib.slots.request import build_request
from model_foundry_tests.replay_server import ReplayServer, reply_from_fixture
from model_foundry_tests.shared.lib.slots.context_fit import (
    windows,
)
from model_foundry_tests.slot_fixtures import fast_options, run, slot_file_from


def test_fit_routes_to_the_slots_that_hold_the_prompt() -> None:
    sf = slot_file_from(windows(kindergarten=400, naughty=2000))
    with ContextBook(sf.live_slots()) as book:
        # "summary" is served by kindergarten, then worker (naughty) as fallback.
        short = fit_request(book, sf, "summary", Body(messages=[{"role": "user", "content": "hi"}]))
        assert short.fits and short.only_slots is None
        text = "y" * 600  # 600 + overhead + 100 answer: too much for 400, fine for 2000
        mid = fit_request(book, sf, "summary", Body(messages=[{"role": "user", "content": text}]))
        assert mid.fits and mid.only_slots == ("naughty",)
        # What was counted on naughty is what naughty is sent, rendered once, in fitting.
        asked = Body(messages=[{"role": "user", "content": text}])
        thinking = sf.thinking_for_role("summary")
        assert set(mid.rendered) == {"naughty"}
        assert mid.rendered["naughty"].kwargs == build_request(
            sf.slots["naughty"], asked, thinking=thinking
        )
        huge = "z" * 5000
        none = fit_request(book, sf, "summary", Body(messages=[{"role": "user", "content": huge}]))
        assert not none.fits
        assert "largest context among the slots serving role 'summary' is 2000 tokens" in (
            none.reason or ""
        )
        assert book.context("naughty").source == "slot file"


def test_narrowed_tasks_only_go_to_their_slots(tmp_path: Path) -> None:
    sf = slot_file_from(windows(None, None))

    async def go() -> tuple:
        async with SlotSimulator(sf, free_ports=True) as sim:
            tasks = [
                Task(f"k{i}", "t", "summary", Body(prompt=f"p{i}"), only_slots=("naughty",))
                for i in range(6)
            ] + [Task(f"f{i}", "t", "summary", Body(prompt=f"q{i}")) for i in range(6)]
            return await dispatch(tasks, sim.slot_file, "standard", options=fast_options(tmp_path))

    result = run(go())
    assert result.ok_count == 12
    assert {result.final[f"k{i}"].slot for i in range(6)} == {"naughty"}
    # The unrestricted ones still go to the role's own slot first.
    assert "kindergarten" in {result.final[f"f{i}"].slot for i in range(6)}


def test_a_prompt_that_fits_no_slot_is_recorded_once_and_never_sent(
    tmp_path: Path, db_path: Path
) -> None:
    sf0 = slot_file_from(windows(kindergarten=300, naughty=300))

    async def go() -> tuple:
        async with SlotSimulator(sf0, free_ports=True) as sim:
            sf = sim.slot_file
            reqs = [
                plan(
                    Request(
                        "t", "summary", Body(messages=[{"role": "user", "content": "z" * 900}])
                    ),
                    sf,
                ),
                plan(
                    Request("t", "summary", Body(messages=[{"role": "user", "content": "ok"}])), sf
                ),
            ]
            store = CompletionStore(db_path)

            def one_run() -> CompletionBatch:
                # A run as an asset does it, off the simulator's event loop.
                with ContextBook(sf.live_slots()) as book:
                    fitted = fit(reqs, book, sf)
                return answer(store, fitted, sf, options=fast_options(tmp_path))

            batches = [await asyncio.to_thread(one_run) for _ in range(2)]
            return reqs, batches, {n: s.stats_dict() for n, s in sim.sims.items()}

    reqs, batches, stats = run(go())
    first, second = batches
    assert list(first.unfit) == [reqs[0].key] and first.failed == [reqs[0].key]
    assert reqs[1].key in first.results
    assert second.reused == 1 and second.unfit == first.unfit and second.sent == 0
    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "SELECT error_class, error, status FROM llm_completions WHERE request_key = ?",
            [reqs[0].key],
        ).fetchall()
    # Recorded once across both runs, with the reason; the slot never saw it.
    assert len(rows) == 1 and rows[0][0] == PROMPT_TOO_LONG and rows[0][2] == "error"
    assert "300 tokens" in rows[0][1]
    assert sum(s["requests"] for s in stats.values()) == 1


def test_only_prompts_that_might_not_fit_are_counted_by_the_server() -> None:
    short = [{"role": "user", "content": "hi"}]
    # 2 bytes + 16 template tokens + 100 answer + 256 allowance = 374.
    assert surely_fits(374, Body(messages=short), reserve=100)
    assert not surely_fits(373, Body(messages=short), reserve=100)
    sf = slot_file_from(windows(kindergarten=4000, naughty=4000))
    with ContextBook(sf.live_slots()) as book:
        assert fit_request(book, sf, "summary", Body(messages=short)).fits
        # Nothing asked: no count, not even the estimate's fallback path.
        assert book.estimated == 0
        assert not fit_request(
            book, sf, "summary", Body(messages=[{"role": "u", "content": "x" * 5000}])
        ).fits
        assert book.estimated >= 1


def test_vllm_window_and_count_from_its_documented_shapes() -> None:
    """vLLM cannot run here: its /v1/models and /tokenize shapes, replayed from fixtures."""
    models = reply_from_fixture("vllm/models.json")
    model = models.body["data"][0]["id"]
    window = models.body["data"][0]["max_model_len"]

    async def go() -> tuple:
        routes = {"/v1/models": models, "/tokenize": reply_from_fixture("vllm/tokenize.json")}
        async with ReplayServer(routes) as server:
            data = windows(None, None)
            data["slots"]["naughty"]["base_url"] = f"{server.url}/v1"
            data["slots"]["naughty"]["model"] = model
            sf = slot_file_from(data)

            def ask() -> tuple:
                with ContextBook([sf.slots["naughty"]]) as book:
                    return book.context("naughty"), book.count(
                        sf.slots["naughty"], Body(messages=[{"role": "user", "content": "hi"}])
                    )

            ctx, counted = await asyncio.to_thread(ask)
            return ctx, counted, server.requests

    ctx, counted, sent = run(go())
    assert (ctx.tokens, ctx.source) == (window, "vLLM /v1/models")
    assert counted.exact and counted.tokens == 7
    tokenize = [body for path, body in sent if path == "/tokenize"]
    assert tokenize == [{"model": model, "messages": [{"role": "user", "content": "hi"}]}]
