"""The pipeline against real llama.cpp ``llama-server`` processes serving a tiny local GGUF:
the integration tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from model_foundry.lib.llm import CompletionStore, Request
from model_foundry.lib.llm import request as llm_request
from model_foundry.lib.llm.answer import answer
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.client import SlotClient
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.fit import PROMPT_TOO_LONG, fit_request
from model_foundry_tests.real_llama import (  # noqa: F401 - fixtures are found by name
    PER_REQUEST,
    metrics,
    trio_fixture,
)
from model_foundry_tests.slot_fixtures import fast_options, run

pytestmark = pytest.mark.timeout(600)


def test_chat_and_plamo_completions_stream_usage_and_timings(trio: dict[str, Any]) -> None:
    sf = trio["slot_file"]

    async def go() -> list:
        out = []
        async with SlotClient(sf.slots["kindergarten"]) as chat:
            out.append(
                await chat.run(
                    key="c",
                    task="t",
                    role="kindergarten",
                    body=Body(
                        messages=[
                            {"role": "system", "content": "Answer briefly."},
                            {"role": "user", "content": "Summarise the session about DuckDB."},
                        ]
                    ),
                )
            )
        async with SlotClient(sf.slots["translator"]) as plamo:
            out.append(
                await plamo.run(
                    key="p", task="t", role="translator", body=Body(text="Hello there, world.")
                )
            )
        return out

    chat, plamo = run(go())
    for a in (chat, plamo):
        assert a.ok, a.error
        assert a.content and a.completion_tokens == 24
        # Speeds come from llama.cpp's own `timings`, TTFT from the stream.
        assert a.prompt_tps and a.gen_tps and a.ttft_s is not None
    # The server's own count of the prompt equals what the pipeline counts before sending.
    with ContextBook(sf.live_slots()) as book:
        slot = sf.slots["kindergarten"]
        from model_foundry.lib.slots.request import build_request

        req = build_request(
            slot,
            Body(
                messages=[
                    {"role": "system", "content": "Answer briefly."},
                    {"role": "user", "content": "Summarise the session about DuckDB."},
                ]
            ),
        )
        counted = book.count(slot, Body(messages=req["messages"]))
        assert counted.exact and counted.tokens == chat.prompt_tokens
        ctx = book.context("kindergarten")
        assert (ctx.tokens, ctx.source) == (PER_REQUEST, "llama.cpp /props")
    m = metrics(trio["servers"]["kindergarten"].url)
    assert m["llamacpp:prompt_tokens_total"] >= chat.prompt_tokens
    assert m["llamacpp:tokens_predicted_total"] >= 24


def test_a_prompt_over_the_window_is_routed_or_recorded_never_sent(
    trio: dict[str, Any], db_path: Path, tmp_path: Path
) -> None:
    sf = trio["slot_file"]
    long_text = " ".join(f"word{i}" for i in range(900))  # far over 1024 tokens
    # The real server rejects it: the limit is real, not ours.
    direct = run(_one(sf.slots["kindergarten"], [{"role": "user", "content": long_text}]))
    assert not direct.ok and direct.http_status == 400 and not direct.retryable
    assert "exceeds the available context size" in (direct.error or "")

    with ContextBook(sf.live_slots()) as book:
        fit = fit_request(
            book, sf, "kindergarten", Body(messages=[{"role": "user", "content": long_text}])
        )
        # The largest window of the role's slots is naughty's (4096 over 3 parallel).
        widest = book.context("naughty").tokens
        assert widest is not None and widest > PER_REQUEST
        assert not fit.fits and f"is {widest} tokens (naughty)" in (fit.reason or "")
        asked = Request(
            "t", "kindergarten", Body(messages=[{"role": "user", "content": long_text}])
        )
        req = llm_request.plan(asked, sf)
        fitted = llm_request.fit([req], book, sf)
    before = metrics(trio["servers"]["kindergarten"].url)["llamacpp:prompt_tokens_total"]
    batch = answer(CompletionStore(db_path), fitted, sf, options=fast_options(tmp_path))
    assert batch.failed == [req.key] and batch.sent == 0
    after = metrics(trio["servers"]["kindergarten"].url)["llamacpp:prompt_tokens_total"]
    assert after == before
    with duckdb.connect(str(db_path), read_only=True) as con:
        (cls,) = con.execute(
            "SELECT error_class FROM llm_completions WHERE request_key = ?", [req.key]
        ).fetchone()
    assert cls == PROMPT_TOO_LONG


async def _one(slot: Any, messages: list[dict[str, str]]) -> Any:
    async with SlotClient(slot) as client:
        return await client.run(key="k", task="t", role="r", body=Body(messages=messages))


def test_a_prompt_asked_again_reuses_the_servers_cache_and_its_row_says_how_much(
    trio: dict[str, Any], db_path: Path, tmp_path: Path
) -> None:
    """The same prompt under another task (another request key, so it is sent again) lands in
    the place that holds it (llama-server picks an idle slot by prompt similarity) and reuses
    all of it but its last token, which llama-server always computes. The row stores what the
    server said, and the server's own counter agrees."""
    sf = trio["slot_file"]
    body = Body(
        messages=[
            {"role": "system", "content": "Summarise the session in two sentences. " * 8},
            {"role": "user", "content": "The session fixed the DuckDB writer and measured it."},
        ]
    )
    first, again = (
        llm_request.plan(Request(task, "kindergarten", body), sf) for task in ("map", "map_again")
    )
    assert first.key != again.key
    store = CompletionStore(db_path)
    for request in (first, again):  # one after the other: the first is done when the second goes
        batch = answer(store, [request], sf, options=fast_options(tmp_path))
        assert request.key in batch.results, batch.failed
    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "SELECT task, slot, prompt_tokens, cached_prompt_tokens FROM llm_completions "
            "ORDER BY recorded_at"
        ).fetchall()
    (_, _, prompt, fresh), (task, slot, prompt_again, cached) = rows
    assert fresh == 0  # a server just started holds nothing
    assert (task, slot, prompt_again) == ("map_again", "kindergarten", prompt)
    assert cached == prompt - 1 > 0
    m = metrics(trio["servers"]["kindergarten"].url)
    assert m["llamacpp:prompt_tokens_cached_total"] == cached
