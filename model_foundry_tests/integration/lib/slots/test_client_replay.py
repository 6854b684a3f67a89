"""The client against recorded server responses (vLLM shapes, odd error bodies, empty answers):
the integration tests."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib.llm import CompletionStore, Request
from model_foundry.lib.llm.answer import answer
from model_foundry.lib.llm.request import plan
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.client import SlotClient
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.slots.dispatcher import RetryPolicy, Task, run_dispatch
from model_foundry.lib.slots.server_errors import context_limit_from_error
from model_foundry_tests.replay_server import (
    ReplayServer,
    Reply,
    load_fixture,
    reply_from_fixture,
)
from model_foundry_tests.shared.lib.slots.client_replay import (
    BLANK_BODIES,
    CHAT,
    INSTRUCTION,
    MSG,
    TRANSLATE,
)
from model_foundry_tests.slot_fixtures import fast_options, run, shipped_data, slot_file_from


def one_slot_file(url: str, *, stream: bool = False, **slot: Any) -> SlotFile:
    """The shipped ``naughty`` (vLLM, chat) slot alone, pointed at ``url``: no other slot is
    live, so nothing else on this machine is ever asked."""
    data = shipped_data()
    naughty = copy.deepcopy(data["slots"]["naughty"])
    naughty.update(base_url=f"{url}/v1", stream=stream, **slot)
    naughty.pop("api_key_env", None)
    return slot_file_from(
        {
            "default_profile": "only",
            "slots": {"naughty": naughty},
            "profiles": {"only": ["naughty"]},
            "roles": {"naughty": {"thinking": False, "fallbacks": []}},
        }
    )


async def ask(reply: Reply, *, stream: bool = False, **kwargs: Any) -> tuple[Attempt, list]:
    async with ReplayServer({CHAT: reply}) as server:
        sf = one_slot_file(server.url, stream=stream)
        async with SlotClient(sf.slots["naughty"]) as client:
            kwargs.setdefault("body", Body(messages=MSG))
            attempt = await client.run(key="k", task="test", role="naughty", **kwargs)
        return attempt, server.bodies(CHAT)


def chat_body(content: str | None, reasoning: str | None, finish: str) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "reasoning": reasoning},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 64, "total_tokens": 69},
    }


# ---------------------------------------------------------------------------------------------
# Error bodies: any body gives one readable line, never an exception.


@pytest.mark.parametrize("status", [400, 500])
@pytest.mark.parametrize(
    "reply",
    [Reply(body=b) for b in BLANK_BODIES[:7]] + [Reply(raw=" \n ", content_type="text/plain")],
    ids=repr,
)
def test_a_blank_error_body_over_http_is_an_error_attempt(reply: Reply, status: int) -> None:
    reply = Reply(status=status, body=reply.body, raw=reply.raw, content_type=reply.content_type)
    a, _ = run(ask(reply))
    assert a.status == "error" and a.http_status == status
    assert a.error == f"HTTP {status} with no error message"
    assert a.retryable is (status == 500)


def test_blank_error_bodies_do_not_fail_the_dispatch(tmp_path: Path) -> None:
    async def go() -> Any:
        async with ReplayServer({CHAT: Reply(status=500, body={"error": {"message": " "}})}) as s:
            sf = one_slot_file(s.url)
            tasks = [
                Task(key=f"k{i}", task="test", role="naughty", body=Body(messages=MSG))
                for i in range(3)
            ]
            retry = RetryPolicy(max_attempts=2, backoff_base_s=0.01, backoff_max_s=0.02)
            # Off this loop, which serves the replies meanwhile.
            return await asyncio.to_thread(
                run_dispatch, tasks, sf, options=fast_options(tmp_path, retry=retry)
            )

    result = run(go())
    assert result.error_count == 3 and result.ok_count == 0
    assert {a.error for a in result.attempts} == {"HTTP 500 with no error message"}
    assert len(result.attempts) == 6


# ---------------------------------------------------------------------------------------------
# Empty answers are errors, retried in the run and asked again by a later run.


def test_all_reasoning_and_no_answer_is_an_empty_answer_error_that_says_why() -> None:
    a, _ = run(
        ask(Reply(body=chat_body("", "thinking " * 64, "length")), params={"max_tokens": 64})
    )
    # Not retried in the run: the same budget would be spent on reasoning again.
    assert a.status == "error" and a.error_class == "EmptyAnswer" and not a.retryable
    assert a.error == (
        "the model spent all 64 max_tokens on reasoning and wrote no answer; "
        "raise max_tokens or switch thinking off for this role"
    )
    assert a.content is None and a.reasoning and a.finish_reason == "length"
    assert a.completion_tokens == 64


def test_a_streamed_answer_of_reasoning_only_is_an_empty_answer() -> None:
    chunks = [
        {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
         "choices": [{"index": 0, "delta": {"reasoning": "hmm"}, "finish_reason": None}]},
        {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
         "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "length"}]},
    ]  # fmt: skip
    a, _ = run(ask(Reply(chunks=chunks), stream=True, params={"max_tokens": 16}))
    assert a.error_class == "EmptyAnswer"
    assert a.error.startswith("the model spent all 16 max_tokens on reasoning")


@pytest.mark.parametrize(("content", "reasoning"), [("  \n ", None), ("", None), (None, "x")])
def test_blank_content_without_a_cut_is_the_plain_empty_answer(
    content: str | None, reasoning: str | None
) -> None:
    a, _ = run(ask(Reply(body=chat_body(content, reasoning, "stop"))))
    assert a.error_class == "EmptyAnswer" and a.status == "error" and a.retryable
    assert a.error == "the slot returned an empty answer"


def test_empty_answers_are_retried_and_a_later_run_asks_again(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    empty = Reply(body=chat_body("", None, "stop"))
    good = Reply(body=chat_body("Four.", None, "stop"))

    async def go() -> list[tuple[int, int, int, int]]:
        figures = []
        async with ReplayServer({CHAT: empty}) as server:
            sf = one_slot_file(server.url)
            request = plan(Request("test", "naughty", Body(messages=MSG)), sf)
            retry = RetryPolicy(max_attempts=2, backoff_base_s=0.01, backoff_max_s=0.02)
            options = fast_options(tmp_path, retry=retry)
            store = CompletionStore(db)
            for reply in (empty, empty, good, good):
                server.routes[CHAT] = reply
                batch = await asyncio.to_thread(answer, store, [request], sf, options=options)
                attempts = len(batch.dispatch.attempts) if batch.dispatch else 0
                figures.append((batch.sent, batch.reused, len(batch.failed), attempts))
        return figures

    # Two runs get empty answers (each tried twice) and ask again; the third gets an answer
    # and the fourth reuses it.
    assert run(go()) == [(1, 0, 1, 2), (1, 0, 1, 2), (1, 0, 0, 1), (0, 1, 0, 0)]


# ---------------------------------------------------------------------------------------------
# A translation on a chat slot carries its instruction.


def test_a_chat_slot_given_text_to_translate_gets_the_instruction_over_http() -> None:
    reply = Reply(body=chat_body("こんばんは", None, "stop"))
    a, sent = run(ask(reply, body=Body(text="Good evening."), params=TRANSLATE))
    assert a.ok and a.content == "こんばんは"
    # The instruction, the worked examples as earlier turns, then the text.
    messages = sent[0]["messages"]
    assert messages[0] == {"role": "system", "content": INSTRUCTION}
    assert [m["role"] for m in messages[1:]] == ["user", "assistant"] * 3 + ["user"]
    assert messages[-1] == {"role": "user", "content": "Good evening."}
    # The languages are instructions for the prompt, not sampling parameters.
    assert "source_lang" not in json.dumps(sent[0])


def test_a_translation_falling_back_to_a_chat_slot_is_keyed_apart_and_instructed(
    tmp_path: Path,
) -> None:
    """The translation role with no live translator falls back to a chat slot: the key differs
    from the plamo one (another model), and the chat slot receives the instruction."""
    shipped = slot_file_from(shipped_data())
    plamo_key = plan(
        Request("summary_translation", "translation", Body(text="Good morning."), TRANSLATE),
        shipped,
    ).key

    async def go() -> tuple[str, list]:
        async with ReplayServer({CHAT: Reply(body=chat_body("おはよう", None, "stop"))}) as s:
            data = shipped_data()
            data["slots"]["naughty"].update(base_url=f"{s.url}/v1", stream=False)
            data["slots"]["naughty"].pop("api_key_env", None)
            data["profiles"]["chat_only"] = ["naughty"]
            data["roles"]["translation"] = {"fallbacks": ["naughty"]}
            sf = slot_file_from(data)
            request = plan(
                Request("summary_translation", "translation", Body(text="Good morning."),
                        TRANSLATE),
                sf, "chat_only",
            )  # fmt: skip
            store = CompletionStore(tmp_path / "t.duckdb")
            batch = await asyncio.to_thread(
                answer, store, [request], sf, "chat_only", options=fast_options(tmp_path)
            )
            assert batch.results[request.key].content == "おはよう"
            return request.key, s.bodies(CHAT)

    chat_key, sent = run(go())
    assert chat_key != plamo_key
    assert sent[0]["messages"][0] == {"role": "system", "content": INSTRUCTION}


# ---------------------------------------------------------------------------------------------
# vLLM response shapes, replayed from fixtures.


@pytest.mark.parametrize(
    "fixture",
    ["vllm/chat_completion_reasoning.json", "vllm/chat_completion_reasoning_content.json"],
)
def test_vllm_reasoning_under_either_field_name(fixture: str) -> None:
    a, _ = run(ask(reply_from_fixture(fixture)))
    assert a.ok, a.error
    assert (a.content, a.reasoning) == ("Four.", "Two plus two is four.")
    assert (a.prompt_tokens, a.completion_tokens, a.finish_reason) == (12, 9, "stop")
    # Started without --enable-prompt-tokens-details: the server did not say what it reused.
    assert a.cached_prompt_tokens is None


def test_vllm_stream_with_usage_in_a_last_chunk_without_choices() -> None:
    chunks = load_fixture("vllm/chat_stream_include_usage.jsonl")
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]
    a, sent = run(ask(reply_from_fixture("vllm/chat_stream_include_usage.jsonl"), stream=True))
    assert a.ok, a.error
    assert (a.content, a.reasoning) == ("Four.", "Two plus two is four.")
    assert (a.prompt_tokens, a.completion_tokens, a.finish_reason) == (12, 9, "stop")
    assert a.ttft_s is not None and a.gen_tps
    assert sent[0]["stream_options"] == {"include_usage": True}
    assert a.cached_prompt_tokens is None


def test_vllm_with_prompt_tokens_details_reports_what_its_prefix_cache_held() -> None:
    a, _ = run(ask(reply_from_fixture("vllm/chat_stream_prompt_tokens_details.jsonl"), stream=True))
    assert a.ok, a.error
    assert (a.prompt_tokens, a.cached_prompt_tokens) == (612, 592)


def llama_body(prompt: int, timings: dict[str, Any] | None, cached: int | None) -> dict[str, Any]:
    """A non-streamed llama-server answer (``server-task.cpp`` ``to_json_oaicompat_chat`` as
    vendored in llama-cpp-python 0.3.36): ``timings`` beside ``usage``."""
    body = chat_body("Four.", None, "stop")
    body["usage"] = {"prompt_tokens": prompt, "completion_tokens": 2, "total_tokens": prompt + 2}
    if cached is not None:
        body["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
    if timings is not None:
        body["timings"] = timings
    return body


@pytest.mark.parametrize(
    ("body", "stored"),
    [
        (llama_body(44, {"cache_n": 40, "prompt_n": 4}, 40), 40),
        # An older build: timings only.
        (llama_body(44, {"cache_n": 40, "prompt_n": 4}, None), 40),
        (llama_body(44, {"cache_n": 0, "prompt_n": 44}, 0), 0),
        # No word of the cache at all; then a count the prompt cannot hold: not a measurement.
        (llama_body(44, {"prompt_n": 44}, None), None),
        (llama_body(44, {"cache_n": 45, "prompt_n": 0}, 45), None),
    ],
    ids=["both", "timings-only", "nothing-reused", "not-reported", "more-than-the-prompt"],
)
def test_llama_cpp_reuse_comes_from_cache_n(body: dict[str, Any], stored: int | None) -> None:
    async def go() -> Attempt:
        async with ReplayServer({CHAT: Reply(body=body)}) as server:
            sf = one_slot_file(server.url, runtime="llamacpp")
            async with SlotClient(sf.slots["naughty"]) as client:
                return await client.run(key="k", task="t", role="naughty", body=Body(messages=MSG))

    a = run(go())
    assert a.ok, a.error
    assert (a.prompt_tokens, a.cached_prompt_tokens) == (44, stored)


def test_vllm_context_length_error_is_a_final_error_with_the_servers_sentence() -> None:
    message = load_fixture("vllm/error_context_length.json")["message"]
    a, _ = run(ask(reply_from_fixture("vllm/error_context_length.json")))
    assert a.status == "error" and a.retryable is False
    assert (a.error_class, a.http_status, a.error) == ("BadRequestError", 400, message)
    assert context_limit_from_error(a.error) == 2048


# ---------------------------------------------------------------------------------------------
# Context size from "too long" errors.
