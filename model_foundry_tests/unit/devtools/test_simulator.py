"""The slot simulator over real HTTP: endpoints, queueing, faults, error bodies, its CLI: the
unit tests."""

from __future__ import annotations

from model_foundry.devtools import simulator as slot_simulator
from model_foundry.devtools.simulator import (
    LatencyModel,
)
from model_foundry.devtools.simulator import tokenizer as sim_tokenizer
from model_foundry.devtools.simulator.prompt_cache import (
    SLOT_PROMPT_SIMILARITY,
    PromptCache,
    common_prefix,
)
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


def test_a_llama_cpp_place_reuses_the_prefix_it_holds_and_a_prompt_goes_where_it_is_held() -> None:
    cache = PromptCache(3)
    shared = ("<bos>", "system", "rub", "ric", "user")
    a, b = (*shared, "one"), (*shared, "two")
    # Empty places: the least recently used, the last of equals as llama-server's scan picks.
    assert cache.choose([0, 1, 2], a) == 2
    assert cache.reuse(2, a, ("ans",)) == 0
    # The place holding the shared prefix (5 of 6 tokens: above the 0.1 similarity) wins.
    assert cache.choose([0, 1, 2], b) == 2
    assert cache.reuse(2, b) == len(shared)
    # A prompt it holds whole still computes its last token, as llama-server does.
    assert cache.reuse(2, b) == len(b) - 1
    # Nothing alike anywhere: least recently used again, and nothing reused there.
    other = ("<bos>", "x", "y", "z", "w", "v", "u", "t", "s", "r", "q")
    assert common_prefix(other, b) == 1 and 1 / len(other) < SLOT_PROMPT_SIMILARITY
    assert cache.choose([0, 1, 2], other) == 1
    assert cache.reuse(1, other) == 0
