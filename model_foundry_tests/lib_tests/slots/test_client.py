"""The per-slot client: prompt formats and parsing (pure), then real HTTP to the simulator."""

from __future__ import annotations

import pytest

from model_foundry.devtools.simulator import (
    CONTEXT_MARKER,
    DEFAULT_LATENCY,
    SlotSimulator,
    default_window,
)
from model_foundry.devtools.simulator import tokenizer as sim_tokenizer
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.client import (
    Attempt,
    SlotClient,
    build_request,
    derive_rates,
    error_message_from_body,
    fold_system_into_user,
    parse_timings,
    plamo_translate_prompt,
    split_gemma_thinking,
)
from model_foundry.lib.slots.server_errors import context_limit_from_error
from model_foundry_tests.slot_fixtures import run, shipped_data, shipped_slot_file, slot_file_from

# ---------------------------------------------------------------------------------------------
# Pure


def test_plamo_prompt_format() -> None:
    assert plamo_translate_prompt("Good morning.", "English", "Japanese") == (
        "<|plamo:op|>dataset\ntranslation\n"
        "<|plamo:op|>input lang=English\nGood morning.\n"
        "<|plamo:op|>output lang=Japanese\n"
    )


def test_translator_request_uses_completions_with_stop_and_explicit_max_tokens() -> None:
    slot = shipped_slot_file().slots["translator"]
    req = build_request(
        slot, Body(text="Hello"), params={"target_lang": "English", "source_lang": "Japanese"}
    )
    assert req["prompt"] == plamo_translate_prompt("Hello", "Japanese", "English")
    assert "<|plamo:op|>" in req["stop"]
    assert req["max_tokens"] == 1024
    assert "messages" not in req
    assert req["stream_options"] == {"include_usage": True}


def test_thinking_per_role_goes_to_chat_template_kwargs() -> None:
    sf = shipped_slot_file()
    naughty = sf.slots["naughty"]
    msgs = [{"role": "user", "content": "hi"}]
    on = build_request(naughty, Body(messages=msgs), thinking=sf.thinking_for_role("reasoning"))
    assert on["extra_body"]["chat_template_kwargs"] == {"enable_thinking": True}
    off = build_request(naughty, Body(messages=msgs), thinking=sf.thinking_for_role("worker"))
    assert off["extra_body"]["chat_template_kwargs"] == {"enable_thinking": False}
    # A task can still override its role.
    forced = build_request(
        naughty, Body(messages=msgs), thinking=False, params={"thinking": True, "top_k": 20}
    )
    assert forced["extra_body"]["chat_template_kwargs"] == {"enable_thinking": True}
    assert forced["extra_body"]["top_k"] == 20
    plain = build_request(naughty, Body(messages=msgs))
    assert "chat_template_kwargs" not in plain.get("extra_body", {})


def test_system_message_folds_into_first_user_turn() -> None:
    msgs = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Summarise this."},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "again"},
    ]
    folded = fold_system_into_user(msgs)
    assert folded[0] == {"role": "user", "content": "Be brief.\n\nSummarise this."}
    assert [m["role"] for m in folded] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == "Summarise this."  # input untouched
    kindergarten = shipped_slot_file().slots["kindergarten"]
    assert build_request(kindergarten, Body(messages=msgs))["messages"] == folded


def test_gemma_thinking_markers_are_split_from_the_answer() -> None:
    text = "<|channel>thought\nLet me count.<channel|>The answer is 4."
    assert split_gemma_thinking(text) == ("The answer is 4.", "Let me count.")
    assert split_gemma_thinking("plain answer") == ("plain answer", None)
    # Cut off by max_tokens before the closing marker: all of it is reasoning.
    assert split_gemma_thinking("<|channel>thought\nstill thinking") == ("", "still thinking")


def test_timings_parsing() -> None:
    assert parse_timings({"prompt_per_second": 812.5, "predicted_per_second": 41.0}) == (
        812.5,
        41.0,
    )
    assert parse_timings(
        {"prompt_n": 100, "prompt_ms": 50.0, "predicted_n": 20, "predicted_ms": 500.0}
    ) == (
        2000.0,
        40.0,
    )
    assert parse_timings(None) == (None, None)
    assert parse_timings({"prompt_n": 3}) == (None, None)


def test_rates_derived_from_the_stream() -> None:
    prompt_tps, gen_tps = derive_rates(100, 11, latency_s=1.5, ttft_s=0.5)
    assert prompt_tps == pytest.approx(200.0)
    assert gen_tps == pytest.approx(10.0)
    assert derive_rates(None, None, 1.0, None) == (None, None)


def test_error_reason_from_both_body_styles() -> None:
    vllm = {
        "object": "error",
        "message": "maximum context length is 8192",
        "type": "BadRequestError",
        "code": 400,
    }
    llama = {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size",
            "type": "x",
        }
    }
    assert error_message_from_body(vllm) == "maximum context length is 8192"
    assert error_message_from_body(llama) == "the request exceeds the available context size"
    assert (
        error_message_from_body(llama["error"]) == "the request exceeds the available context size"
    )


# ---------------------------------------------------------------------------------------------
# Real HTTP


async def _ask(
    slot_name: str, *, profile: str = "full", data: dict | None = None, **kwargs
) -> tuple[Attempt, dict]:
    sf = slot_file_from(data) if data else shipped_slot_file()
    async with SlotSimulator(sf, profile=profile, free_ports=True, speed=50) as sim:
        async with SlotClient(sim.slot_file.slots[slot_name]) as client:
            attempt = await client.run(key="k1", task="test", role=slot_name, **kwargs)
        return attempt, sim.stats()[slot_name]


MSG = [{"role": "user", "content": "one two three"}]


def test_vllm_reasoning_field_and_usage_from_the_stream() -> None:
    a, _ = run(_ask("naughty", body=Body(messages=MSG), thinking=True))
    assert a.status == "ok", a.error
    assert a.content == "echo: three two one"
    assert a.reasoning and a.reasoning.startswith("thinking about 3 words")
    # The simulator's stated tokenizer, the same one its /tokenize answers with.
    assert a.prompt_tokens == sim_tokenizer.count_chat(MSG) and a.completion_tokens > 4
    assert a.ttft_s is not None and 0 < a.ttft_s <= a.latency_s
    assert a.gen_tps and a.gen_tps > 0 and a.prompt_tps and a.prompt_tps > 0
    assert a.finish_reason == "stop"
    assert (a.slot, a.model, a.runtime, a.attempt) == ("naughty", "gemma-4-31b-it-nvfp4", "vllm", 1)


def test_llamacpp_reasoning_content_and_timings() -> None:
    a, stats = run(_ask("grandpa", body=Body(messages=MSG), thinking=True))
    assert a.status == "ok", a.error
    assert a.content == "echo: three two one"
    assert a.reasoning and a.reasoning.startswith("thinking about 3 words")
    # The rates come from llama.cpp's timings object, i.e. exactly the simulated speeds.
    lat = DEFAULT_LATENCY["llamacpp"]
    assert a.gen_tps == pytest.approx(lat.gen_tps * 50)
    assert a.prompt_tps == pytest.approx(lat.prompt_tps * 50)
    assert stats["completed"] == 1


def test_gemma_markers_from_the_server_are_split_out() -> None:
    a, _ = run(_ask("kindergarten", body=Body(messages=MSG), thinking=True))
    assert a.status == "ok", a.error
    assert a.content == "echo: three two one"
    assert "<|channel>" not in a.content
    assert a.reasoning and a.reasoning.startswith("thinking about 3 words")


def test_no_reasoning_when_thinking_is_off() -> None:
    a, _ = run(_ask("naughty", body=Body(messages=MSG), thinking=False))
    assert a.reasoning is None and a.content == "echo: three two one"


def test_translator_over_completions() -> None:
    a, _ = run(_ask("translator", body=Body(text="Good morning, friend.")))
    assert a.status == "ok", a.error
    assert a.content == "[Japanese] Good morning, friend."
    assert a.finish_reason == "stop"


def test_non_streaming_slot() -> None:
    data = shipped_data()
    data["slots"]["naughty"]["stream"] = False
    a, _ = run(_ask("naughty", data=data, body=Body(messages=MSG), thinking=True))
    assert a.status == "ok", a.error
    assert a.content == "echo: three two one" and a.reasoning
    assert a.ttft_s is None and a.completion_tokens


@pytest.mark.parametrize(
    ("slot", "reason"),
    [
        ("naughty", "maximum context length is"),  # vLLM body style
        ("kindergarten", "exceeds the available context size"),  # llama.cpp style
    ],
)
def test_context_too_long_is_a_non_retryable_error_with_its_reason(slot: str, reason: str) -> None:
    a, _ = run(
        _ask(slot, body=Body(messages=[{"role": "user", "content": f"{CONTEXT_MARKER} long"}]))
    )
    assert a.status == "error"
    assert a.http_status == 400 and a.error_class == "BadRequestError"
    assert reason in (a.error or "")
    # The error states the slot's simulated window, in its runtime's wording.
    window = default_window(shipped_slot_file().slots[slot])
    assert context_limit_from_error(a.error or "") == window
    assert a.retryable is False


def test_unreachable_slot_is_a_retryable_error() -> None:
    from model_foundry.devtools.ports import free_port

    data = shipped_data()
    data["slots"]["naughty"]["base_url"] = f"http://127.0.0.1:{free_port()}/v1"
    data["slots"]["naughty"]["timeouts"] = {"connect_s": 2, "request_s": 5}
    sf = slot_file_from(data)

    async def go() -> Attempt:
        async with SlotClient(sf.slots["naughty"]) as client:
            return await client.run(key="k", task="t", role="naughty", body=Body(messages=MSG))

    a = run(go())
    assert a.status == "error" and a.retryable
    assert a.error_class == "APIConnectionError"
