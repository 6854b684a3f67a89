"""The per-slot client: prompt formats and parsing (pure), then real HTTP to the simulator: the
unit tests."""

from __future__ import annotations

import pytest

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.errors import error_message_from_body
from model_foundry.lib.slots.quirks import (
    derive_rates,
    fold_system_into_user,
    parse_timings,
    plamo_translate_prompt,
    split_gemma_thinking,
)
from model_foundry.lib.slots.request import DEFAULT_ANSWER_RESERVE, build_request, render
from model_foundry_tests.slot_fixtures import shipped_slot_file

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


def test_a_rendering_sent_pinned_is_what_build_request_makes_of_the_pin() -> None:
    """Fitting renders a request once and the worker sends it with its server slot pin: the
    same keyword arguments as rendering it with the pin among its params."""
    sf = shipped_slot_file()
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    for name in ("naughty", "kindergarten", "translator"):
        slot = sf.slots[name]
        body = Body(text="Hello") if slot.api != "chat" else Body(prompt="Hello")
        params = {"top_k": 20, "extra_body": {"min_p": 0.1}, "json_schema": schema}
        if slot.api != "chat":
            params = {"target_lang": "English"}
        sent = render(slot, body, params, thinking=True)
        assert sent.kwargs == build_request(slot, body, params, thinking=True)
        assert sent.pinned({}) is sent
        pin = {"id_slot": 2}
        assert sent.pinned(pin).kwargs == build_request(
            slot, body, {**params, **pin}, thinking=True
        )
        assert "id_slot" not in sent.kwargs.get("extra_body", {})  # the rendering is unchanged


def test_a_rendering_counts_its_messages_or_prompt_and_reserves_max_tokens() -> None:
    sf = shipped_slot_file()
    chat = render(sf.slots["kindergarten"], Body(messages=[{"role": "user", "content": "hi"}]))
    assert chat.counted == Body(messages=chat.kwargs["messages"])
    expected = chat.kwargs.get("max_tokens") or DEFAULT_ANSWER_RESERVE
    assert chat.reserve == expected
    plamo = render(sf.slots["translator"], Body(text="Hello"))
    assert plamo.counted == Body(prompt=plamo.kwargs["prompt"])
    assert plamo.reserve == 1024


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


MSG = [{"role": "user", "content": "one two three"}]
