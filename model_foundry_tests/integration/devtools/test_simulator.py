"""The slot simulator over real HTTP: endpoints, queueing, faults, error bodies, its CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from model_foundry.cli import build_parser
from model_foundry.cli.simulator import cmd_simulate_slots
from model_foundry.devtools.simulator import (
    CONTEXT_MARKER,
    Faults,
    LatencyModel,
    SlotSimulator,
    default_window,
)
from model_foundry.devtools.simulator.command import build_parser as simulator_parser
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry_tests.slot_fixtures import run, shipped_data, shipped_slot_file, slot_file_from
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT


def _root(sim: SlotSimulator, slot: str) -> str:
    return sim.base_urls[slot].removesuffix("/v1")


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Prometheus text -> {(sample name, sorted labels): value}, parsed as Prometheus would."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _chat(content: str, **extra) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": content}], **extra}


def test_models_health_metrics_and_llamacpp_slots() -> None:
    async def go() -> None:
        async with (
            SlotSimulator(
                shipped_slot_file(), serve_all=True, free_ports=True, start_delay_s=0.3
            ) as sim,
            aiohttp.ClientSession() as http,
        ):
            naughty, kg = _root(sim, "naughty"), _root(sim, "kindergarten")
            async with http.get(f"{naughty}/health") as r:
                assert r.status == 503  # still "loading"
            async with http.post(f"{naughty}/v1/chat/completions", json=_chat("hi")) as r:
                assert r.status == 503
            async with http.get(f"{naughty}/v1/models") as r:
                assert (await r.json())["data"][0]["id"] == "gemma-4-31b-it-nvfp4"
            await asyncio.sleep(0.35)
            async with http.get(f"{naughty}/health") as r:
                assert r.status == 200
            async with http.get(f"{naughty}/metrics") as r:
                vllm = _samples(await r.text())
                labels = (("engine", "0"), ("model_name", "gemma-4-31b-it-nvfp4"))
                assert vllm[("vllm:num_requests_running", labels)] == 0
                assert ("vllm:num_requests_waiting", labels) in vllm
            async with http.get(f"{kg}/metrics") as r:
                llamacpp = _samples(await r.text())
                assert llamacpp[("llamacpp:requests_processing", ())] == 0
                assert ("llamacpp:requests_deferred", ()) in llamacpp
            async with http.get(f"{kg}/slots") as r:
                slots = await r.json()
                assert [s["id"] for s in slots] == [0, 1, 2, 3, 4]
            async with http.get(f"{naughty}/slots") as r:
                assert r.status == 404  # vLLM has no /slots

    run(go())


def test_metrics_count_what_was_served_under_the_servers_names() -> None:
    """vLLM's counters and TTFT/e2e histograms, llama.cpp's counters, after real requests."""

    async def go() -> tuple[dict, dict, list[dict], list[dict]]:
        fast = LatencyModel(prompt_tps=1e5, gen_tps=2000.0)
        async with (
            SlotSimulator(
                shipped_slot_file(), serve_all=True, free_ports=True, latency=fast
            ) as sim,
            aiohttp.ClientSession() as http,
        ):
            naughty, kg = _root(sim, "naughty"), _root(sim, "kindergarten")
            bodies: dict[str, list[dict]] = {"naughty": [], "kindergarten": []}
            for i in range(4):
                stream = i % 2 == 0
                for name, root in (("naughty", naughty), ("kindergarten", kg)):
                    extra = {"stream": True, "stream_options": {"include_usage": True}}
                    body = _chat(f"question {i} for {name}", **(extra if stream else {}))
                    async with http.post(f"{root}/v1/chat/completions", json=body) as r:
                        text = await r.text()
                    chunks = (
                        [json.loads(line[6:]) for line in text.splitlines()
                         if line.startswith("data: {")]
                        if stream
                        else [json.loads(text)]
                    )  # fmt: skip
                    bodies[name].append(next(c["usage"] for c in chunks if c.get("usage")))
            async with http.get(f"{naughty}/metrics") as r:
                vllm = _samples(await r.text())
            async with http.get(f"{kg}/metrics") as r:
                llamacpp = _samples(await r.text())
            return vllm, llamacpp, bodies["naughty"], bodies["kindergarten"]

    vllm, llamacpp, naughty_usage, kg_usage = run(go())
    labels = (("engine", "0"), ("model_name", "gemma-4-31b-it-nvfp4"))
    assert vllm[("vllm:prompt_tokens_total", labels)] == sum(
        u["prompt_tokens"] for u in naughty_usage
    )
    assert vllm[("vllm:generation_tokens_total", labels)] == sum(
        u["completion_tokens"] for u in naughty_usage
    )
    finished = sum(v for (name, _), v in vllm.items() if name == "vllm:request_success_total")
    assert finished == 4
    assert vllm[("vllm:time_to_first_token_seconds_count", labels)] == 4
    assert vllm[("vllm:e2e_request_latency_seconds_count", labels)] == 4
    inf = (*labels[:1], ("le", "+Inf"), *labels[1:])
    assert vllm[("vllm:time_to_first_token_seconds_bucket", inf)] == 4
    # llama.cpp counts the prompt tokens it computed; those its cache held apart (the four
    # questions share their first words, so each after the first reuses some).
    cached = [u["prompt_tokens_details"]["cached_tokens"] for u in kg_usage]
    assert cached[0] == 0 and all(c > 0 for c in cached[1:])
    assert llamacpp[("llamacpp:prompt_tokens_total", ())] == sum(
        u["prompt_tokens"] for u in kg_usage
    ) - sum(cached)
    assert llamacpp[("llamacpp:prompt_tokens_cached_total", ())] == sum(cached)
    # vLLM as the lab runs it (no --enable-prompt-tokens-details) says nothing of its cache.
    assert all("prompt_tokens_details" not in u for u in naughty_usage)
    assert llamacpp[("llamacpp:tokens_predicted_total", ())] == sum(
        u["completion_tokens"] for u in kg_usage
    )
    assert llamacpp[("llamacpp:tokens_predicted_seconds_total", ())] > 0
    assert llamacpp[("llamacpp:predicted_tokens_seconds", ())] > 0


def test_requests_beyond_parallel_wait_in_a_queue() -> None:
    async def go() -> dict:
        sf = shipped_slot_file()
        latency = LatencyModel(prompt_tps=1e6, gen_tps=100.0)
        async with (
            SlotSimulator(sf, slots=["naughty"], free_ports=True, latency=latency) as sim,
            aiohttp.ClientSession() as http,
        ):
            url = f"{sim.base_urls['naughty']}/chat/completions"

            async def one(i: int) -> str:
                async with http.post(url, json=_chat(f"word {i}")) as r:
                    return (await r.json())["choices"][0]["message"]["content"]

            contents = await asyncio.gather(*(one(i) for i in range(5)))
            assert contents == [f"echo: {i} word" for i in range(5)]
            return sim.stats()["naughty"]

    stats = run(go())
    assert stats["max_processing"] == 3  # parallel of naughty
    assert stats["max_in_flight"] == 5  # two waited in the queue, and were counted
    assert stats["completed"] == 5 and stats["in_flight"] == 0


def test_stream_carries_usage_only_when_asked() -> None:
    async def go() -> tuple[list[dict], list[dict]]:
        async with (
            SlotSimulator(
                shipped_slot_file(), slots=["kindergarten"], free_ports=True, speed=100
            ) as sim,
            aiohttp.ClientSession() as http,
        ):
            url = f"{sim.base_urls['kindergarten']}/chat/completions"
            out = []
            for opts in ({"include_usage": True}, {}):
                async with http.post(
                    url, json=_chat("a b c", stream=True, stream_options=opts)
                ) as r:
                    raw = (await r.text()).split("\n\n")
                chunks = [json.loads(x[6:]) for x in raw if x.startswith("data: {")]
                assert raw[-2] == "data: [DONE]"
                out.append(chunks)
            return out[0], out[1]

    with_usage, without = run(go())
    assert with_usage[-1]["choices"] == [] and with_usage[-1]["usage"]["completion_tokens"] == 4
    assert with_usage[-1]["timings"]["predicted_n"] == 4  # llama.cpp slot
    assert all("usage" not in c for c in without)
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in without if c["choices"])
    assert text == "echo: c b a"


def test_error_bodies_follow_the_runtime_style() -> None:
    async def go() -> tuple[dict, dict]:
        async with (
            SlotSimulator(shipped_slot_file(), free_ports=True) as sim,
            aiohttp.ClientSession() as http,
        ):
            bodies = []
            for slot in ("naughty", "kindergarten"):
                url = f"{sim.base_urls[slot]}/chat/completions"
                async with http.post(url, json=_chat(f"{CONTEXT_MARKER} x")) as r:
                    assert r.status == 400
                    bodies.append(await r.json())
            return bodies[0], bodies[1]

    vllm, llama = run(go())
    assert (
        vllm["object"] == "error"
        and vllm["code"] == 400
        and "maximum context length" in vllm["message"]
    )
    assert llama["error"]["code"] == 400 and llama["error"]["type"] == "exceed_context_size_error"


def test_faults_through_constructor_and_control_endpoint() -> None:
    async def go() -> list[int]:
        faults = Faults(burst_503=1, burst_429=1)
        async with (
            SlotSimulator(
                shipped_slot_file(), slots=["naughty"], free_ports=True, speed=100, faults=faults
            ) as sim,
            aiohttp.ClientSession() as http,
        ):
            url = f"{sim.base_urls['naughty']}/chat/completions"
            statuses = []
            for _ in range(3):
                async with http.post(url, json=_chat("x")) as r:
                    statuses.append(r.status)
            async with http.post(
                f"{_root(sim, 'naughty')}/_sim/faults",
                json={"error_rate": 1.0, "error_status": 502},
            ) as r:
                assert (await r.json())["error_rate"] == 1.0
            async with http.post(url, json=_chat("x")) as r:
                statuses.append(r.status)
            async with http.post(
                f"{_root(sim, 'naughty')}/_sim/faults", json={"error_rate": 0, "drop_rate": 1.0}
            ) as r:
                assert r.status == 200
            try:
                async with http.post(url, json=_chat("x")) as r:
                    await r.read()
                    statuses.append(r.status)
            except aiohttp.ClientError:
                statuses.append(-1)  # connection cut
            async with http.get(f"{_root(sim, 'naughty')}/_sim/stats") as r:
                stats = await r.json()
            assert stats["dropped"] == 1 and stats["completed"] == 1
            return statuses

    assert run(go()) == [503, 429, 200, 502, -1]


def test_cli_serves_until_terminated(tmp_path: Path) -> None:
    # The product CLI only names the verb; the simulator parses its own arguments.
    verb, rest = build_parser().parse_known_args(
        ["simulate-slots", "--all", "--speed", "3", "--error-rate", "0.1"]
    )
    assert verb.func is cmd_simulate_slots
    args = simulator_parser().parse_args(rest)
    assert args.serve_all and args.error_rate == 0.1

    out = tmp_path / "live.yaml"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "model_foundry.devtools.simulator",
            "--profile",
            "minimal",
            "--free-ports",
            "--write-slot-file",
            str(out),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not out.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "simulator did not start"
            time.sleep(0.05)
        time.sleep(0.1)
        live = load_slot_file(out)

        async def health() -> list[int]:
            async with aiohttp.ClientSession() as http:
                codes = []
                for s in live.live_slots("minimal"):
                    async with http.get(s.base_url.removesuffix("/v1") + "/health") as r:
                        codes.append(r.status)
                return codes

        assert run(health()) == [200, 200]
    finally:
        proc.terminate()
        stdout, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "dev/test tool" in stdout and "naughty" in stdout and "kindergarten" not in stdout


def test_context_endpoints_and_tokenize_answer_like_each_runtime() -> None:
    """llama.cpp /props, /apply-template, /tokenize; vLLM /v1/models max_model_len, /tokenize."""
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "日本 DuckDB"},
    ]

    async def go() -> dict:
        data = shipped_data()
        data["slots"]["translator"]["context_tokens"] = 2000
        async with (
            SlotSimulator(slot_file_from(data), serve_all=True, free_ports=True, speed=100) as sim,
            aiohttp.ClientSession() as http,
        ):
            kg, naughty = _root(sim, "kindergarten"), _root(sim, "naughty")
            out: dict = {"sim": sim}
            async with http.get(f"{kg}/props") as r:
                out["props"] = await r.json()
            async with http.post(f"{kg}/apply-template", json={"messages": messages}) as r:
                out["template"] = (await r.json())["prompt"]
            body = {"content": out["template"], "add_special": True}
            async with http.post(f"{kg}/tokenize", json=body) as r:
                out["kg_tokens"] = (await r.json())["tokens"]
            async with http.post(
                f"{kg}/v1/chat/completions", json=_chat("x", messages=messages)
            ) as r:
                out["kg_usage"] = (await r.json())["usage"]
            async with http.post(f"{kg}/tokenize", json={"content": "Duck DB"}) as r:
                out["plain"] = (await r.json())["tokens"]
            async with http.get(f"{naughty}/v1/models") as r:
                out["models"] = await r.json()
            async with http.post(
                f"{naughty}/tokenize", json={"model": "m", "messages": messages}
            ) as r:
                out["vllm"] = await r.json()
            async with http.post(
                f"{naughty}/v1/chat/completions", json=_chat("x", messages=messages)
            ) as r:
                out["naughty_usage"] = (await r.json())["usage"]
            async with http.get(f"{naughty}/props") as r:
                out["naughty_props"] = r.status
            async with http.get(f"{_root(sim, 'translator')}/props") as r:
                out["translator"] = await r.json()

            def book() -> tuple:
                with ContextBook(sim.slot_file.slots.values()) as b:
                    counted = b.count(sim.slot_file.slots["kindergarten"], Body(messages=messages))
                    return b.contexts(), counted, b.estimated

            out["book"] = await asyncio.to_thread(book)
            return out

    out = run(go())
    slots = out["sim"].slot_file.slots
    kg_window = default_window(slots["kindergarten"])
    assert out["props"]["default_generation_settings"]["n_ctx"] == kg_window
    assert out["template"].startswith("<bos>") and "日本 DuckDB" in out["template"]
    # The stated tokenizer: "Duck" "DB" -> 2; the template's count is the usage's.
    assert len(out["plain"]) == 2
    assert len(out["kg_tokens"]) == out["kg_usage"]["prompt_tokens"]
    assert out["models"]["data"][0]["max_model_len"] == default_window(slots["naughty"])
    assert out["vllm"]["count"] == out["naughty_usage"]["prompt_tokens"]
    assert out["vllm"]["max_model_len"] == default_window(slots["naughty"])
    assert out["naughty_props"] == 404  # vLLM has no /props
    assert out["translator"]["default_generation_settings"]["n_ctx"] == 2000
    contexts, counted, estimated = out["book"]
    assert (contexts["kindergarten"].tokens, contexts["kindergarten"].source) == (
        kg_window,
        "llama.cpp /props",
    )
    assert contexts["naughty"].source == "vLLM /v1/models"
    assert counted.exact and counted.tokens == out["kg_usage"]["prompt_tokens"]
    assert estimated == 0
