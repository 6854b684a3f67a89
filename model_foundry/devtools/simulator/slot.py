"""One simulated slot: an aiohttp app with OpenAI-compatible routes, its queue and faults."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from model_foundry.devtools.simulator.answers import (
    ErrorStyle,
    Faults,
    LatencyModel,
    ReasoningStyle,
    SimAnswer,
    answer_chat,
    answer_completion,
    context_too_long_message,
    error_body,
    split_text,
)
from model_foundry.devtools.simulator.metrics import Finished, SlotMetrics
from model_foundry.lib.slots.config import Slot


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
        self.prometheus = SlotMetrics(
            self.slot,
            running=lambda: self.stats.processing,
            waiting=lambda: self.stats.in_flight - self.stats.processing,
        )

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
        return web.Response(
            body=self.prometheus.render(),
            headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
        )

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
        arrived = asyncio.get_running_loop().time()
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
                    return await self._respond(
                        request, body, answer, chat, leave, fault == "drop", arrived
                    )
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
        arrived: float,
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

        def finished() -> None:
            self._count_ok(answer)
            self.prometheus.finished(
                Finished(
                    prompt_tokens=answer.prompt_tokens,
                    completion_tokens=answer.completion_tokens,
                    finish_reason=answer.finish_reason,
                    # Like vLLM's: from arrival, queueing included, to the first token.
                    ttft_s=begin - arrived + prompt_s,
                    e2e_s=loop.time() - arrived,
                    prompt_s=prompt_s,
                    gen_s=gen_s,
                )
            )

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
            finished()
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
        pieces += [(p, False) for p in split_text(answer.content, self.max_chunks)]
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
        finished()
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
