"""The slot simulator over real HTTP: endpoints, queueing, faults, error bodies, its CLI: the
unit tests."""

from __future__ import annotations

from model_foundry.devtools import simulator as slot_simulator
from model_foundry.devtools.simulator import (
    LatencyModel,
)
from model_foundry.devtools.simulator import tokenizer as sim_tokenizer
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT


def test_slowdown_and_output_derivation() -> None:
    body = {"messages": [{"role": "user", "content": "alpha beta"}], "max_tokens": 2}
    ans = slot_simulator.answer_chat(body, "none")
    assert ans.content == "echo: beta" and ans.finish_reason == "length"
    plamo = slot_simulator.answer_completion(
        {"prompt": plamo_prompt("Japanese", "こんにちは", "English"), "stop": ["<|plamo:op|>"]}
    )
    assert plamo.content == "[English] こんにちは\n"
    no_stop = slot_simulator.answer_completion({"prompt": plamo_prompt(), "max_tokens": 50})
    assert "<|plamo:op|>" in no_stop.content  # why the client must send the stop string
    assert LatencyModel(1000, 10).seconds(500, 20, speed=2) == 0.25 + 1.0


def plamo_prompt(src: str = "English", text: str = "hi", dst: str = "Japanese") -> str:
    return (
        f"<|plamo:op|>dataset\ntranslation\n<|plamo:op|>input lang={src}\n{text}\n"
        f"<|plamo:op|>output lang={dst}\n"
    )


def test_the_stated_tokenizer_never_exceeds_utf8_bytes() -> None:
    for text in ["", "a", "DuckDB writer", "日本語。", "x" * 9, "a-b_c  d\n", "🙂 ok"]:
        assert sim_tokenizer.count(text) <= len(text.encode("utf-8"))
    assert sim_tokenizer.count("DuckDB writer") == 4
    assert sim_tokenizer.count("日本語。") == 4
