"""Slot simulator: a DEV AND TEST TOOL standing in for GPU model servers. Not a model.

``model-foundry simulate-slots`` serves every slot of a slot file as an OpenAI-compatible server
over real HTTP, on the host:port of its ``base_url``, so the pipeline, its tests and the slot
benchmark run without a GPU:

- ``/v1/chat/completions`` (streaming or not; usage in the last chunk when ``include_usage``),
  ``/v1/completions``, ``/v1/models``;
- ``/health`` (503 while "loading" for ``start_delay_s``), ``/metrics`` with vLLM names
  (``vllm:num_requests_running``) or llama.cpp names (``llamacpp:requests_processing``) by
  runtime, llama.cpp ``timings`` and ``/slots`` for ``llamacpp`` slots;
- errors in the runtime's body style: vLLM ``{"object": "error", "message", "type", "code"}``,
  llama.cpp ``{"error": {"code", "message", "type"}}``.

Like the real servers, requests beyond ``parallel`` wait in a queue. Latency is
``prompt_tokens / prompt_tps + completion_tokens / gen_tps`` divided by ``speed``. Output is
derived from the prompt (``echo: <last user message, words reversed>``; the translator answers
``[<target lang>] <text>``) so tests can check it. Reasoning is emitted when thinking is on:
vLLM's ``reasoning`` field, llama.cpp's ``reasoning_content``, or Gemma 4 channel markers.

Faults are injectable through the constructor, CLI flags and ``POST /_sim/faults``; the most
requests a slot ever had in flight (queued or running) is at ``GET /_sim/stats``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import json
import random
import re
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aiohttp import web

from model_foundry.slot_config import Slot, SlotFile, load_slot_file, write_slot_file

ReasoningStyle = Literal["reasoning", "reasoning_content", "gemma-channel", "none"]
ErrorStyle = Literal["vllm", "llamacpp"]

CONTEXT_MARKER = "<<CONTEXT_TOO_LONG>>"
PLAMO_INPUT_RE = re.compile(
    r"<\|plamo:op\|>input lang=(?P<src>[^\n]*)\n(?P<text>.*?)\n"
    r"<\|plamo:op\|>output lang=(?P<dst>[^\n]*)\n",
    re.S,
)


@dataclass(frozen=True)
class LatencyModel:
    """How fast a simulated server prefills and generates, in tokens per second."""

    prompt_tps: float = 2000.0
    gen_tps: float = 50.0

    def prompt_s(self, prompt_tokens: int, speed: float = 1.0) -> float:
        return prompt_tokens / self.prompt_tps / speed

    def gen_s(self, completion_tokens: int, speed: float = 1.0) -> float:
        return completion_tokens / self.gen_tps / speed

    def seconds(self, prompt_tokens: int, completion_tokens: int, speed: float = 1.0) -> float:
        return self.prompt_s(prompt_tokens, speed) + self.gen_s(completion_tokens, speed)


DEFAULT_LATENCY = {
    "vllm": LatencyModel(prompt_tps=4000.0, gen_tps=60.0),
    "llamacpp": LatencyModel(prompt_tps=1500.0, gen_tps=45.0),
}


@dataclass
class Faults:
    """What goes wrong on a slot. Shares are probabilities per request; bursts count down."""

    error_rate: float = 0.0
    error_status: int = 500
    burst_503: int = 0
    burst_429: int = 0
    slowdown: float = 1.0
    drop_rate: float = 0.0
    context_marker: str = CONTEXT_MARKER

    def update(self, changes: dict[str, Any]) -> None:
        names = {f.name for f in dataclasses.fields(self)}
        unknown = set(changes) - names
        if unknown:
            raise ValueError(f"unknown fault(s): {', '.join(sorted(unknown))}")
        for k, v in changes.items():
            setattr(self, k, type(getattr(self, k))(v))


# ---------------------------------------------------------------------------------------------
# Pure response model: what a request gets back, independent of HTTP.


@dataclass
class SimAnswer:
    content: str
    reasoning: str | None
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


def count_tokens(text: str) -> int:
    """Words stand in for tokens: deterministic and cheap."""
    return len(text.split())


def echo_text(text: str) -> str:
    return "echo: " + " ".join(reversed(text.split()))


def translate_text(text: str, target_lang: str) -> str:
    return f"[{target_lang}] {text.strip()}"


def thinking_requested(body: dict[str, Any]) -> bool:
    kwargs = body.get("chat_template_kwargs") or {}
    return bool(kwargs.get("enable_thinking") or kwargs.get("thinking"))


def _reasoning_for(text: str) -> str:
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    return f"thinking about {count_tokens(text)} words ({digest})"


def _limit(words: list[str], max_tokens: int | None) -> tuple[list[str], bool]:
    if max_tokens is not None and len(words) > max_tokens:
        return words[:max_tokens], True
    return words, False


def answer_chat(body: dict[str, Any], style: ReasoningStyle) -> SimAnswer:
    messages = body.get("messages") or []
    user = [m for m in messages if m.get("role") == "user"]
    last = _text_of(user[-1].get("content")) if user else ""
    prompt_tokens = sum(count_tokens(_text_of(m.get("content"))) + 4 for m in messages)
    reasoning = _reasoning_for(last) if thinking_requested(body) and style != "none" else None
    words, cut = _limit(echo_text(last).split(), body.get("max_tokens"))
    content = " ".join(words)
    completion_tokens = len(words) + (count_tokens(reasoning) if reasoning else 0)
    if reasoning and style == "gemma-channel":
        content = f"<|channel>thought\n{reasoning}<channel|>{content}"
        reasoning = None
    return SimAnswer(
        content, reasoning, prompt_tokens, completion_tokens, "length" if cut else "stop"
    )


def answer_completion(body: dict[str, Any]) -> SimAnswer:
    prompt = _text_of(body.get("prompt"))
    m = PLAMO_INPUT_RE.search(prompt)
    # plamo-2-translate keeps going with another op block; only a stop string ends it cleanly.
    raw = (
        translate_text(m.group("text"), m.group("dst").strip()) + "\n<|plamo:op|>dataset\n"
        if m
        else echo_text(prompt)
    )
    stops = body.get("stop") or []
    for s in [stops] if isinstance(stops, str) else stops:
        if s and s in raw:
            raw = raw[: raw.index(s)]
    words, cut = _limit(raw.split(" "), body.get("max_tokens"))
    finish = "length" if cut else "stop"
    text = " ".join(words)
    return SimAnswer(text, None, count_tokens(prompt), max(1, count_tokens(text)), finish)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def default_reasoning_style(slot: Slot) -> ReasoningStyle:
    if slot.runtime == "vllm":
        return "reasoning"
    # llama.cpp builds without a Gemma 4 reasoning parser leave the markers in the content.
    return "gemma-channel" if "gemma" in slot.model.lower() else "reasoning_content"


def error_body(style: ErrorStyle, status: int, message: str, kind: str) -> dict[str, Any]:
    if style == "vllm":
        return {"object": "error", "message": message, "type": kind, "param": None, "code": status}
    return {"error": {"code": status, "message": message, "type": kind}}


def context_too_long_message(style: ErrorStyle, prompt_tokens: int) -> tuple[str, str]:
    if style == "vllm":
        return (
            "This model's maximum context length is 8192 tokens. However, you requested "
            f"{prompt_tokens + 100000} tokens in the messages. "
            "Please reduce the length of the messages.",
            "BadRequestError",
        )
    return (
        "the request exceeds the available context size, try increasing it",
        "exceed_context_size_error",
    )


# ---------------------------------------------------------------------------------------------
# One simulated server.


@dataclass
class SlotStats:
    in_flight: int = 0
    max_in_flight: int = 0
    processing: int = 0
    max_processing: int = 0
    requests: int = 0
    completed: int = 0
    errors: int = 0
    dropped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class SimSlot:
    slot: Slot
    latency: LatencyModel
    faults: Faults
    reasoning_style: ReasoningStyle
    error_style: ErrorStyle
    speed: float = 1.0
    start_delay_s: float = 0.0
    max_chunks: int = 8
    seed: int | None = None
    stats: SlotStats = field(default_factory=SlotStats)
    started: float = field(default_factory=time.monotonic)
    url: str = ""

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.queue = asyncio.Semaphore(self.slot.parallel)
        self.free_ids = list(range(self.slot.parallel))

    @property
    def loading(self) -> bool:
        return time.monotonic() - self.started < self.start_delay_s

    def stats_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot.name,
            "parallel": self.slot.parallel,
            **dataclasses.asdict(self.stats),
        }

    def error_response(self, status: int, message: str, kind: str) -> web.Response:
        self.stats.errors += 1
        return web.json_response(error_body(self.error_style, status, message, kind), status=status)

    # -- routes -------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/health", self.health)
        app.router.add_get("/metrics", self.metrics)
        if self.slot.runtime == "llamacpp":
            app.router.add_get("/slots", self.slots)
        app.router.add_get("/_sim/stats", self.get_stats)
        app.router.add_post("/_sim/faults", self.post_faults)
        app.router.add_get("/_sim/faults", self.get_faults)
        app.router.add_post("/_sim/reset", self.post_reset)
        return app

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=True)

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=False)

    async def models(self, request: web.Request) -> web.Response:
        model = {
            "id": self.slot.model,
            "object": "model",
            "created": 0,
            "owned_by": self.slot.runtime,
        }
        return web.json_response({"object": "list", "data": [model]})

    async def health(self, request: web.Request) -> web.Response:
        if self.loading:
            return web.json_response(
                error_body(self.error_style, 503, "Loading model", "unavailable_error"), status=503
            )
        if self.slot.runtime == "vllm":
            return web.Response(status=200)
        return web.json_response({"status": "ok"})

    async def metrics(self, request: web.Request) -> web.Response:
        s = self.stats
        waiting = s.in_flight - s.processing
        if self.slot.runtime == "vllm":
            label = f'{{model_name="{self.slot.model}"}}'
            rows = [
                ("vllm:num_requests_running", "gauge", s.processing),
                ("vllm:num_requests_waiting", "gauge", waiting),
                ("vllm:prompt_tokens_total", "counter", s.prompt_tokens),
                ("vllm:generation_tokens_total", "counter", s.completion_tokens),
                ("vllm:request_success_total", "counter", s.completed),
            ]
        else:
            label = ""
            rows = [
                ("llamacpp:requests_processing", "gauge", s.processing),
                ("llamacpp:requests_deferred", "gauge", waiting),
                ("llamacpp:prompt_tokens_total", "counter", s.prompt_tokens),
                ("llamacpp:tokens_predicted_total", "counter", s.completion_tokens),
                ("llamacpp:n_decode_total", "counter", s.completed),
            ]
        lines = []
        for name, kind, value in rows:
            lines += [f"# TYPE {name} {kind}", f"{name}{label} {value}"]
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")

    async def slots(self, request: web.Request) -> web.Response:
        busy = set(range(self.slot.parallel)) - set(self.free_ids)
        return web.json_response(
            [
                {"id": i, "n_ctx": 8192, "is_processing": i in busy}
                for i in range(self.slot.parallel)
            ]
        )

    async def get_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats_dict())

    async def get_faults(self, request: web.Request) -> web.Response:
        return web.json_response(dataclasses.asdict(self.faults))

    async def post_faults(self, request: web.Request) -> web.Response:
        try:
            self.faults.update(await request.json())
        except (ValueError, TypeError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return web.json_response(dataclasses.asdict(self.faults))

    async def post_reset(self, request: web.Request) -> web.Response:
        in_flight, processing = self.stats.in_flight, self.stats.processing
        self.stats = SlotStats(in_flight=in_flight, processing=processing)
        return web.json_response(self.stats_dict())

    # -- generation ---------------------------------------------------------------------------

    def _pick_fault(self, text: str, prompt_tokens: int) -> tuple[int, str, str] | str | None:
        f = self.faults
        if self.loading:
            return 503, "Loading model", "unavailable_error"
        if f.context_marker and f.context_marker in text:
            return (400, *context_too_long_message(self.error_style, prompt_tokens))
        if f.burst_503 > 0:
            f.burst_503 -= 1
            return 503, "Service Unavailable: server overloaded", "unavailable_error"
        if f.burst_429 > 0:
            f.burst_429 -= 1
            return 429, "Too many requests", "rate_limit_error"
        if f.error_rate and self.rng.random() < f.error_rate:
            return f.error_status, "simulated server error", "server_error"
        if f.drop_rate and self.rng.random() < f.drop_rate:
            return "drop"
        return None

    async def _generate(self, request: web.Request, *, chat: bool) -> web.StreamResponse:
        s = self.stats
        s.requests += 1
        s.in_flight += 1
        s.max_in_flight = max(s.max_in_flight, s.in_flight)
        counted = True

        def leave() -> None:
            # Called right before the last bytes go out, so a client that reacts to the end of
            # a response (and sends its next request) never sees itself counted twice.
            nonlocal counted
            if counted:
                s.in_flight -= 1
                counted = False

        try:
            try:
                body = await request.json()
            except (ValueError, UnicodeDecodeError):
                leave()
                return self.error_response(400, "request body is not JSON", "invalid_request_error")
            answer = answer_chat(body, self.reasoning_style) if chat else answer_completion(body)
            request_text = json.dumps(body.get("messages") if chat else body.get("prompt"))
            fault = self._pick_fault(request_text, answer.prompt_tokens)
            if fault == "drop" and not body.get("stream"):
                s.dropped += 1
                leave()
                return self._drop(request)
            if isinstance(fault, tuple):
                leave()
                return self.error_response(*fault)
            async with self.queue:
                slot_id = self.free_ids.pop(0)
                s.processing += 1
                s.max_processing = max(s.max_processing, s.processing)
                try:
                    return await self._respond(request, body, answer, chat, leave, fault == "drop")
                finally:
                    s.processing -= 1
                    self.free_ids.append(slot_id)
        finally:
            leave()

    def _drop(self, request: web.Request) -> web.Response:
        if request.transport is not None:
            request.transport.abort()
        return web.Response(status=500)

    async def _respond(
        self,
        request: web.Request,
        body: dict[str, Any],
        answer: SimAnswer,
        chat: bool,
        leave: Any,
        drop: bool,
    ) -> web.StreamResponse:
        speed = self.speed / max(self.faults.slowdown, 1e-6)
        prompt_s = self.latency.prompt_s(answer.prompt_tokens, speed)
        gen_s = self.latency.gen_s(answer.completion_tokens, speed)
        s = self.stats
        created = int(time.time())
        rid = f"{'chatcmpl' if chat else 'cmpl'}-{s.requests}"
        obj = "chat.completion" if chat else "text_completion"
        usage = {
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "total_tokens": answer.prompt_tokens + answer.completion_tokens,
        }
        timings = None
        if self.slot.runtime == "llamacpp":
            timings = {
                "prompt_n": answer.prompt_tokens,
                "prompt_ms": prompt_s * 1000,
                "prompt_per_second": answer.prompt_tokens / prompt_s if prompt_s else None,
                "predicted_n": answer.completion_tokens,
                "predicted_ms": gen_s * 1000,
                "predicted_per_second": answer.completion_tokens / gen_s if gen_s else None,
            }
        rfield = "reasoning" if self.reasoning_style == "reasoning" else "reasoning_content"

        loop = asyncio.get_running_loop()
        begin = loop.time()

        async def sleep_until(offset_s: float) -> None:
            # Absolute deadlines: timer overshoot on one chunk must not add up over a stream.
            await asyncio.sleep(max(0.0, begin + offset_s - loop.time()))

        if not body.get("stream"):
            await sleep_until(prompt_s + gen_s)
            if chat:
                message: dict[str, Any] = {"role": "assistant", "content": answer.content}
                if answer.reasoning:
                    message[rfield] = answer.reasoning
                choice: dict[str, Any] = {"index": 0, "message": message}
            else:
                choice = {"index": 0, "text": answer.content, "logprobs": None}
            choice["finish_reason"] = answer.finish_reason
            payload: dict[str, Any] = {
                "id": rid,
                "object": obj,
                "created": created,
                "model": self.slot.model,
                "choices": [choice],
                "usage": usage,
            }
            if timings:
                payload["timings"] = timings
            self._count_ok(answer)
            leave()
            return web.json_response(payload)

        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        obj_chunk = "chat.completion.chunk" if chat else "text_completion"

        async def send(choice: dict[str, Any] | None, extra: dict[str, Any] | None = None) -> None:
            chunk: dict[str, Any] = {
                "id": rid,
                "object": obj_chunk,
                "created": created,
                "model": self.slot.model,
                "choices": [choice] if choice else [],
            }
            if extra:
                chunk.update(extra)
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())

        def piece(
            text: str, *, reasoning: bool = False, finish: str | None = None
        ) -> dict[str, Any]:
            if chat:
                delta: dict[str, Any] = {rfield: text} if reasoning else {"content": text}
                return {"index": 0, "delta": delta, "finish_reason": finish}
            return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}

        await sleep_until(prompt_s)
        pieces: list[tuple[str, bool]] = []
        if answer.reasoning:
            pieces.append((answer.reasoning, True))
        pieces += [(p, False) for p in _split(answer.content, self.max_chunks)]
        if chat:
            await send(
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            )
        per_piece = gen_s / max(len(pieces), 1)
        for i, (text, is_reasoning) in enumerate(pieces):
            await send(piece(text, reasoning=is_reasoning))
            if drop and i == 0:
                # Cut the connection mid-stream, the way a crashed server does.
                s.dropped += 1
                leave()
                if request.transport is not None:
                    request.transport.abort()
                return resp
            await sleep_until(prompt_s + per_piece * (i + 1))
        await send(piece("", finish=answer.finish_reason))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self._count_ok(answer)
        leave()
        if include_usage or timings:
            extra: dict[str, Any] = {"usage": usage} if include_usage else {}
            if timings:
                extra["timings"] = timings
            await send(None, extra)
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    def _count_ok(self, answer: SimAnswer) -> None:
        self.stats.completed += 1
        self.stats.prompt_tokens += answer.prompt_tokens
        self.stats.completion_tokens += answer.completion_tokens


def _split(text: str, n: int) -> list[str]:
    """Up to ``n`` stream pieces that join back to ``text`` (few chunks keep the CPU cost low)."""
    if not text:
        return []
    words = re.split(r"(?<= )", text)
    size = max(1, -(-len(words) // max(n, 1)))
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]


# ---------------------------------------------------------------------------------------------
# Many servers: one per slot, in-process.


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (for pointing a slot at a dead server)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class SlotSimulator:
    """Serve slots in this process: ``async with SlotSimulator(slot_file, free_ports=True) as sim``.

    ``sim.slot_file`` is the slot file with base_urls pointing at the ports really bound;
    ``sim.write_slot_file(path)`` writes it for other processes.
    """

    def __init__(
        self,
        slot_file: SlotFile,
        *,
        slots: list[str] | None = None,
        profile: str | None = None,
        serve_all: bool = False,
        free_ports: bool = False,
        ports: dict[str, int] | None = None,
        host: str | None = None,
        speed: float = 1.0,
        latency: dict[str, LatencyModel] | LatencyModel | None = None,
        faults: dict[str, Faults] | Faults | None = None,
        reasoning_styles: dict[str, ReasoningStyle] | None = None,
        error_styles: dict[str, ErrorStyle] | None = None,
        start_delay_s: float = 0.0,
        max_chunks: int = 8,
        seed: int | None = 0,
    ) -> None:
        if slots is None:
            slots = (
                list(slot_file.slots)
                if serve_all
                else [s.name for s in slot_file.live_slots(profile)]
            )
        unknown = [n for n in slots if n not in slot_file.slots]
        if unknown:
            raise ValueError(f"unknown slot(s) {unknown} in {slot_file.source}")
        self.source = slot_file
        self.free_ports = free_ports
        self.ports = dict(ports or {})
        self.host = host
        self.sims: dict[str, SimSlot] = {}
        for name in slots:
            slot = slot_file.slots[name]
            lat = latency.get(name) if isinstance(latency, dict) else latency
            flt = faults.get(name) if isinstance(faults, dict) else faults
            self.sims[name] = SimSlot(
                slot=slot,
                latency=lat or DEFAULT_LATENCY[slot.runtime],
                faults=dataclasses.replace(flt) if flt else Faults(),
                reasoning_style=(reasoning_styles or {}).get(name) or default_reasoning_style(slot),
                error_style=(error_styles or {}).get(name) or slot.runtime,
                speed=speed,
                start_delay_s=start_delay_s,
                max_chunks=max_chunks,
                seed=None if seed is None else seed + len(self.sims),
            )
        self._runners: list[web.AppRunner] = []
        self.slot_file = slot_file

    async def start(self) -> SlotSimulator:
        urls: dict[str, str] = {}
        seen: dict[tuple[str, int], str] = {}
        for name, sim in self.sims.items():
            host, port = sim.slot.host_port()
            host = self.host or host
            if self.free_ports:
                port = 0
            port = self.ports.get(name, port)
            if port and (host, port) in seen:
                raise ValueError(
                    f"slots {seen[(host, port)]} and {name} share {host}:{port}; "
                    "give each slot its own port"
                )
            seen[(host, port)] = name
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError as exc:
                sock.close()
                await self.stop()
                raise OSError(
                    f"slot {name}: cannot listen on {host}:{port}: {exc.strerror}"
                ) from None
            sock.listen(256)
            runner = web.AppRunner(sim.app(), access_log=None, handle_signals=False)
            await runner.setup()
            await web.SockSite(runner, sock).start()
            self._runners.append(runner)
            real_port = sock.getsockname()[1]
            sim.url = f"http://{host}:{real_port}/v1"
            sim.started = time.monotonic()
            urls[name] = sim.url
        self.slot_file = self.source.with_base_urls(urls)
        return self

    async def stop(self) -> None:
        runners, self._runners = self._runners, []
        for runner in runners:
            await runner.cleanup()

    async def __aenter__(self) -> SlotSimulator:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def base_urls(self) -> dict[str, str]:
        return {n: s.url for n, s in self.sims.items()}

    def stats(self) -> dict[str, dict[str, Any]]:
        return {n: s.stats_dict() for n, s in self.sims.items()}

    def reset_stats(self) -> None:
        for s in self.sims.values():
            s.stats = SlotStats(in_flight=s.stats.in_flight, processing=s.stats.processing)

    def set_faults(self, slot: str, **changes: Any) -> None:
        self.sims[slot].faults.update(changes)

    def write_slot_file(self, path: str | Path) -> Path:
        return write_slot_file(self.slot_file, path)


# ---------------------------------------------------------------------------------------------
# CLI: ``model-foundry simulate-slots``.


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``simulate-slots`` on the top-level CLI's subparsers."""
    p = subparsers.add_parser(
        "simulate-slots",
        help="dev/test tool: serve the slot file's slots as fake OpenAI-compatible servers",
        description=(
            "DEV AND TEST TOOL, not a model: serve each slot of a slot file as an "
            "OpenAI-compatible server on its base_url's port, with realistic queueing, "
            "latency and injectable faults. Stop with Ctrl-C."
        ),
    )
    p.add_argument(
        "--slots",
        type=Path,
        default=None,
        help="slot file (default: MODEL_FOUNDRY_SLOTS or the shipped one)",
    )
    p.add_argument(
        "--profile",
        default=None,
        help="serve the live slots of this profile (default: MODEL_FOUNDRY_PROFILE)",
    )
    p.add_argument(
        "--all",
        dest="serve_all",
        action="store_true",
        help="serve every slot, not only the live ones",
    )
    p.add_argument("--only", nargs="+", default=None, metavar="SLOT", help="serve only these slots")
    p.add_argument("--host", default=None, help="listen on this host instead of the base_url's")
    p.add_argument(
        "--free-ports", action="store_true", help="bind free ports instead of the base_url ports"
    )
    p.add_argument(
        "--write-slot-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="write a copy of the slot file pointing at the ports really bound",
    )
    p.add_argument(
        "--speed", type=float, default=1.0, help="latency divisor: 10 answers 10x faster"
    )
    p.add_argument(
        "--start-delay", type=float, default=0.0, help="seconds /health says 503 loading"
    )
    p.add_argument(
        "--error-rate",
        type=float,
        default=0.0,
        help="share of requests answered with --error-status",
    )
    p.add_argument("--error-status", type=int, default=500)
    p.add_argument(
        "--burst-503", type=int, default=0, help="answer the next N requests per slot with 503"
    )
    p.add_argument(
        "--burst-429", type=int, default=0, help="answer the next N requests per slot with 429"
    )
    p.add_argument("--slowdown", type=float, default=1.0, help="multiply latency by this")
    p.add_argument(
        "--drop-rate", type=float, default=0.0, help="share of requests whose connection is cut"
    )
    p.add_argument(
        "--max-chunks", type=int, default=8, help="stream at most this many content chunks"
    )
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run_cli)
    return p


def simulator_from_args(args: argparse.Namespace) -> SlotSimulator:
    slot_file = load_slot_file(args.slots)
    faults = Faults(
        error_rate=args.error_rate,
        error_status=args.error_status,
        burst_503=args.burst_503,
        burst_429=args.burst_429,
        slowdown=args.slowdown,
        drop_rate=args.drop_rate,
    )
    return SlotSimulator(
        slot_file,
        slots=args.only,
        profile=args.profile,
        serve_all=args.serve_all,
        free_ports=args.free_ports,
        host=args.host,
        speed=args.speed,
        faults=faults,
        start_delay_s=args.start_delay,
        max_chunks=args.max_chunks,
        seed=args.seed,
    )


async def serve(args: argparse.Namespace, *, ready: asyncio.Event | None = None) -> None:
    sim = simulator_from_args(args)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with sim:
        if args.write_slot_file:
            sim.write_slot_file(args.write_slot_file)
        for name, url in sim.base_urls.items():
            s = sim.sims[name].slot
            print(
                f"simulating {name:<14} {s.runtime:<8} parallel={s.parallel:<3} {url}", flush=True
            )
        print("slot simulator (dev/test tool) ready; Ctrl-C to stop", flush=True)
        if ready is not None:
            ready.set()
        await stop.wait()


def run_cli(args: argparse.Namespace) -> int:
    from model_foundry.slot_config import SlotFileError

    try:
        asyncio.run(serve(args))
    except SlotFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_foundry.slot_simulator")
    add_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["simulate-slots", *(argv if argv is not None else sys.argv[1:])])
    return args.func(args)


__all__ = [
    "CONTEXT_MARKER",
    "DEFAULT_LATENCY",
    "Faults",
    "LatencyModel",
    "SimAnswer",
    "SlotSimulator",
    "add_cli",
    "answer_chat",
    "answer_completion",
    "count_tokens",
    "echo_text",
    "error_body",
    "free_port",
    "main",
    "run_cli",
    "serve",
    "translate_text",
]

if __name__ == "__main__":
    raise SystemExit(main())
