"""The per-slot client: prompt formats and parsing (pure), then real HTTP to the simulator."""

from __future__ import annotations

import socket
import threading

import pytest

from model_foundry.devtools.simulator import (
    CONTEXT_MARKER,
    DEFAULT_LATENCY,
    SlotSimulator,
    default_window,
)
from model_foundry.devtools.simulator import tokenizer as sim_tokenizer
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.client import SlotClient
from model_foundry.lib.slots.server_errors import context_limit_from_error
from model_foundry_tests.slot_fixtures import run, shipped_data, shipped_slot_file, slot_file_from

# ---------------------------------------------------------------------------------------------
# Pure


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


def test_non_streaming_llamacpp_slot_takes_its_time_to_first_token_from_timings() -> None:
    data = shipped_data()
    data["slots"]["grandpa"]["stream"] = False
    a, _ = run(_ask("grandpa", data=data, body=Body(messages=MSG), thinking=True))
    assert a.status == "ok", a.error
    # The server's own prefill time: there, and within the request's time.
    assert a.ttft_s is not None and 0 < a.ttft_s <= a.latency_s
    assert a.prompt_tps and a.gen_tps


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


def _ask_port(port: int) -> Attempt:
    """One request from the naughty slot's client to whatever listens on ``port``."""
    data = shipped_data()
    data["slots"]["naughty"]["base_url"] = f"http://127.0.0.1:{port}/v1"
    data["slots"]["naughty"]["timeouts"] = {"connect_s": 2, "request_s": 5}
    sf = slot_file_from(data)

    async def go() -> Attempt:
        async with SlotClient(sf.slots["naughty"]) as client:
            return await client.run(key="k", task="t", role="naughty", body=Body(messages=MSG))

    return run(go())


def test_unreachable_slot_is_a_retryable_error() -> None:
    from model_foundry.devtools.ports import free_port

    a = _ask_port(free_port())
    assert a.status == "error" and a.retryable
    assert a.error_class == "APIConnectionError"
    # What the transport said, not only "Connection error.".
    assert a.error is not None and "(ClientConnectorError" in a.error, a.error


def test_a_server_closing_the_connection_says_so_and_may_be_retried() -> None:
    # A server that reads the request and hangs up without a word, as a server closing an
    # idle keep-alive connection at that moment does.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def hang_up() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    try:
        a = _ask_port(port)
    finally:
        thread.join(5)
        listener.close()
    assert a.status == "error" and a.retryable
    assert a.error_class == "APIConnectionError"
    # A close with the request read gives EOF, with part of it unread a reset: either way
    # the transport's own exception is named.
    assert a.error is not None, a
    assert "(ServerDisconnectedError" in a.error or "(ClientOSError" in a.error, a.error


async def _ask_choices(slot_name: str, stream: bool) -> tuple[list[Attempt], Attempt, dict]:
    """Three choices of one request with seed 5, then the request alone with seed 6."""
    data = shipped_data()
    data["slots"][slot_name]["stream"] = stream
    async with SlotSimulator(slot_file_from(data), free_ports=True, speed=50) as sim:
        async with SlotClient(sim.slot_file.slots[slot_name]) as client:
            ask = {"task": "test", "role": slot_name, "body": Body(messages=MSG)}
            choices = await client.run_choices(keys=["a", "b", "c"], params={"seed": 5}, **ask)
            stats = dict(sim.stats()[slot_name])
            alone = await client.run(key="x", params={"seed": 6}, **ask)
        return choices, alone, stats


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("slot_name", ["naughty", "kindergarten"])
def test_one_request_with_n_choices_answers_each_key_as_its_seed_would(
    slot_name: str, stream: bool
) -> None:
    choices, alone, stats = run(_ask_choices(slot_name, stream))
    # One request, three sequences in flight at once: the server's cap counts sequences.
    assert stats["requests"] == 1 and stats["completed"] == 3 and stats["max_in_flight"] == 3
    assert [a.key for a in choices] == ["a", "b", "c"]
    assert all(a.ok and a.finish_reason == "stop" for a in choices)
    # Choice j samples with seed 5 + j, so choice 1 is what seed 6 gives alone.
    assert [a.content.rsplit("#", 1)[1] for a in choices] == ["5", "6", "7"]
    assert choices[1].content == alone.content
    prompt = alone.prompt_tokens
    assert all(a.prompt_tokens == prompt for a in choices)
    # The later choices computed none of the prompt: the first choice's pass was theirs.
    assert [a.cached_prompt_tokens for a in choices[1:]] == [prompt, prompt]
    generated = alone.completion_tokens
    if slot_name == "kindergarten" and stream:
        # llama.cpp streams each choice's own usage right after its last chunk.
        assert [a.completion_tokens for a in choices] == [generated] * 3
    elif slot_name == "kindergarten":
        # Its whole JSON answer keeps only the first choice's usage.
        assert [a.completion_tokens for a in choices] == [generated, None, None]
    else:
        # vLLM's usage covers every choice at once: the first row carries it.
        assert [a.completion_tokens for a in choices] == [3 * generated, None, None]
        assert choices[0].cached_prompt_tokens is None  # vLLM does not say by default
