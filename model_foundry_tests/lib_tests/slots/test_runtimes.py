"""Slot runtimes as objects: the registry validates slot files, and a new runtime is one class.

The fake runtime here exists only inside its test (registered with ``monkeypatch``): a server
with its own window endpoint and its own way of counting, served over real HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.client import build_request
from model_foundry.lib.slots.config import SlotFileError, load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.runtimes import (
    LLAMACPP,
    RUNTIMES,
    VLLM,
    Endpoints,
    HttpClient,
    Runtime,
    context_limit_from_error,
    runtime_for,
    server_root,
)
from model_foundry.lib.slots.runtimes.vllm import Vllm
from model_foundry_tests.replay_server import ReplayServer, Reply
from model_foundry_tests.slot_fixtures import run, shipped_data, shipped_slot_file, write_yaml


class SglangLike(Vllm):
    """A made-up server: vLLM's bodies, but its own window endpoint and token counter."""

    name = "sglang"
    label = "SGLang-like"
    context_source = "sglang-like /server_info"
    endpoints = Endpoints(context="/server_info", tokenize="/count")

    def context_url(self, base_url: str) -> str:
        return f"{server_root(base_url)}{self.endpoints.context}"

    def context_from(self, body: Any, model: str) -> int | None:
        value = body.get("context_length") if isinstance(body, Mapping) else None
        return value if isinstance(value, int) and value > 0 else None

    def count_tokens(self, http: HttpClient, root: str, model: str, body: Body) -> int:
        resp = http.post(
            f"{root}{self.endpoints.tokenize}", json={"text": body.raw or body.messages}
        )
        resp.raise_for_status()
        return int(resp.json()["n"])


def test_a_runtime_added_through_the_protocol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sglang: Runtime = SglangLike()
    monkeypatch.setitem(RUNTIMES, "sglang", sglang)
    routes = {"/server_info": Reply(body={"context_length": 3072}), "/count": Reply(body={"n": 11})}

    async def go() -> tuple:
        async with ReplayServer(routes) as server:
            data = shipped_data()
            data["slots"]["naughty"].update(runtime="sglang", base_url=f"{server.url}/v1")
            sf = load_slot_file(write_yaml(tmp_path / "slots.yaml", data))

            def ask() -> tuple:
                with ContextBook([sf.slots["naughty"]]) as book:
                    return book.context("naughty"), book.count(
                        sf.slots["naughty"], Body(messages=[{"role": "user", "content": "hi"}])
                    )

            ctx, counted = await asyncio.to_thread(ask)
            return sf, ctx, counted, [path for path, _ in server.requests]

    sf, ctx, counted, paths = run(go())
    assert sf.slots["naughty"].server is sglang
    assert (ctx.tokens, ctx.source) == (3072, "sglang-like /server_info")
    assert counted.exact and counted.tokens == 11
    assert paths == ["/server_info", "/count"]
    # Nothing else changed: every other slot is as the shipped file has it.
    shipped = shipped_slot_file()
    others = {n: s for n, s in sf.slots.items() if n != "naughty"}
    assert others == {n: s for n, s in shipped.slots.items() if n != "naughty"}
    assert {s.server for s in others.values()} == {LLAMACPP}
    assert shipped.slots["naughty"].server is VLLM


def test_an_unknown_runtime_is_one_sentence_naming_file_and_field(tmp_path: Path) -> None:
    data = shipped_data()
    data["slots"]["naughty"]["runtime"] = "sglang"
    path = write_yaml(tmp_path / "slots.yaml", data)
    with pytest.raises(SlotFileError) as info:
        load_slot_file(path)
    assert str(info.value) == (
        f"{path}: slots.naughty.runtime: unknown runtime 'sglang' (known: llamacpp, vllm)"
    )
    with pytest.raises(LookupError, match="unknown runtime 'sglang'"):
        runtime_for("sglang")


def test_each_runtime_states_and_reads_its_own_window_and_errors() -> None:
    for runtime in RUNTIMES.values():
        assert runtime.context_from(runtime.context_body(1234, "m"), "m") == 1234
        message, _ = runtime.context_error(1234, 5000)
        assert runtime.context_limit_from_error(message) == 1234
        # Read by the registry too, whichever runtime's wording it is.
        assert context_limit_from_error(message) == 1234
    assert LLAMACPP.context_from({"default_generation_settings": {}}, "m") is None
    assert VLLM.context_from({"data": []}, "m") is None
    assert VLLM.context_url("http://h:1/v1") == "http://h:1/v1/models"
    assert LLAMACPP.context_url("http://h:1/v1") == "http://h:1/props"
    assert VLLM.error_body(400, "x", "BadRequestError")["object"] == "error"
    assert LLAMACPP.error_body(400, "x", "invalid_request_error")["error"]["message"] == "x"


SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}, "why": {"type": "string"}},
    "required": ["score", "why"],
}


def test_structured_output_request_shapes() -> None:
    sf = shipped_slot_file()
    # llama.cpp: OpenAI's response_format, which the server turns into a grammar.
    kg = sf.slots["kindergarten"]
    req = build_request(kg, Body(messages=[{"role": "user", "content": "rate"}]))
    req.update(kg.server.structured_output(SCHEMA, name="verdict"))
    assert req["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
    }
    # vLLM: structured_outputs.json in the extra body (guided_json was removed in 0.12).
    naughty = sf.slots["naughty"]
    shape = naughty.server.structured_output(SCHEMA)
    assert shape == {"extra_body": {"structured_outputs": {"json": SCHEMA}}}
    assert "response_format" not in shape
