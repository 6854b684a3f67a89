"""Slot runtimes as objects: the registry validates slot files, and a new runtime is one class:
the integration tests."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.runtimes import (
    LLAMACPP,
    RUNTIMES,
    VLLM,
    Endpoints,
    HttpClient,
    Runtime,
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
