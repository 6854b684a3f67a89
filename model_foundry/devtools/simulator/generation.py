"""Answering one generation request of a simulated slot: faults, queueing, the reply."""

from __future__ import annotations

import asyncio
import json
import random
from functools import partial
from typing import Any, Protocol

from aiohttp import web

from model_foundry.devtools.simulator import tokenizer
from model_foundry.devtools.simulator.answers import (
    Faults,
    LatencyModel,
    ReasoningStyle,
    SimAnswer,
    answer_chat,
    answer_completion,
)
from model_foundry.devtools.simulator.metrics import Finished, SlotMetrics
from model_foundry.devtools.simulator.prompt_cache import PromptCache
from model_foundry.devtools.simulator.queue import SlotQueue, SlotStats
from model_foundry.devtools.simulator.respond import Reply
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.runtimes import Runtime


class SimulatedSlot(Protocol):
    """What answering needs of its slot (``slot.SimSlot``): a protocol, so the slot that
    routes requests here and this module do not import each other."""

    slot: Slot
    runtime: Runtime
    errors: Runtime
    faults: Faults
    latency: LatencyModel
    reasoning_style: ReasoningStyle
    speed: float
    max_chunks: int
    window: int | None
    rng: random.Random
    queue: SlotQueue
    # The places' prompt cache, for a runtime that reports reuse (llama.cpp); else None.
    prompt_cache: PromptCache | None
    prometheus: SlotMetrics

    @property
    def stats(self) -> SlotStats: ...

    @property
    def loading(self) -> bool: ...

    def error_response(self, status: int, message: str, kind: str) -> web.Response: ...


Fault = tuple[int, str, str]


async def json_object(request: web.Request) -> dict[str, Any] | None:
    """The request's JSON object, or None when the body is not one."""
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


class Generation:
    """``/v1/chat/completions`` and ``/v1/completions`` of one simulated slot."""

    def __init__(self, sim: SimulatedSlot) -> None:
        self.sim = sim

    def _pick_fault(self, text: str, prompt_tokens: int) -> Fault | str | None:
        f = self.sim.faults
        if self.sim.loading:
            return 503, "Loading model", "unavailable_error"
        if f.context_marker and f.context_marker in text:
            assert self.sim.window is not None
            # As if the prompt were far beyond the window, whatever its real length.
            return (400, *self.sim.errors.context_error(self.sim.window, prompt_tokens + 100000))
        if f.burst_503 > 0:
            f.burst_503 -= 1
            return 503, "Service Unavailable: server overloaded", "unavailable_error"
        if f.burst_429 > 0:
            f.burst_429 -= 1
            return 429, "Too many requests", "rate_limit_error"
        if f.error_rate and self.sim.rng.random() < f.error_rate:
            return f.error_status, "simulated server error", "server_error"
        if f.drop_rate and self.sim.rng.random() < f.drop_rate:
            return "drop"
        return None

    async def handle(self, request: web.Request, *, chat: bool) -> web.StreamResponse:
        arrived = asyncio.get_running_loop().time()
        visit = self.sim.queue.arrive()
        try:
            body = await json_object(request)
            if body is None:
                visit.leave()
                return self.sim.error_response(
                    400, "request body is not JSON", "invalid_request_error"
                )
            choices = self._choices(body)
            if isinstance(choices, str):
                visit.leave()
                return self.sim.error_response(400, choices, "invalid_request_error")
            visit.count(choices)
            answers = [self._answer(body, chat, j) for j in range(choices)]
            answer = answers[0]
            request_text = json.dumps(body.get("messages") if chat else body.get("prompt"))
            fault = self._pick_fault(request_text, answer.prompt_tokens)
            if fault == "drop" and not body.get("stream"):
                self.sim.stats.dropped += 1
                visit.leave()
                return self._drop(request)
            if isinstance(fault, tuple):
                visit.leave()
                return self.sim.error_response(*fault)
            cache = self.sim.prompt_cache
            choose = None if cache is None else partial(cache.choose, prompt=answer.prompt_pieces)
            queue = self.sim.queue
            async with queue.processing(choose, self._pinned(body), choices) as places:
                self._meet_cache(places, answers)
                reply = self._reply(answers, chat, visit.leave, arrived)
                return await reply.write(
                    request,
                    stream=bool(body.get("stream")),
                    include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
                    drop=fault == "drop",
                )
        finally:
            visit.leave()

    def _choices(self, body: dict[str, Any]) -> int | str:
        """How many choices the request asks (``n``; llama.cpp's ``n_cmpl`` too), or why the
        server refuses it: like llama.cpp's, at most ``parallel`` (each choice holds a place)."""
        n = body.get("n_cmpl", body.get("n", 1))
        if n is None:
            return 1
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= self.sim.slot.parallel:
            return f"n must be an integer from 1 to {self.sim.slot.parallel}"
        return n

    def _answer(self, body: dict[str, Any], chat: bool, choice: int) -> SimAnswer:
        """Choice ``choice``'s answer: as the request alone with its seed plus ``choice``, the
        way both servers seed the choices of one request."""
        if choice:
            body = {**body, "seed": (body.get("seed") or 0) + choice}
        if chat:
            return answer_chat(
                body, self.sim.reasoning_style, self.sim.runtime.requested_schema(body)
            )
        return answer_completion(body)

    def _meet_cache(self, places: list[int], answers: list[SimAnswer]) -> None:
        """The first choice reuses what its place held; the others copy its prompt pass, so
        none of their prompt is computed (on llama.cpp the prompt's state is copied into their
        places; vLLM's choices share its cached blocks)."""
        cache, first = self.sim.prompt_cache, answers[0]
        if cache is not None:
            first.cached_tokens = cache.reuse(
                places[0], first.prompt_pieces, tokenizer.pieces(first.content)
            )
        for place, other in zip(places[1:], answers[1:], strict=True):
            other.shares_prompt = True
            if cache is not None:
                other.cached_tokens = other.prompt_tokens
                cache.copy(place, (*other.prompt_pieces, *tokenizer.pieces(other.content)))

    def _pinned(self, body: dict[str, Any]) -> int | None:
        """The server slot a request names (llama.cpp ``id_slot``; -1: none), if any."""
        field = self.sim.runtime.slot_pin
        value = body.get(field) if field is not None else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        return None

    def _reply(self, answers: list[SimAnswer], chat: bool, leave: Any, arrived: float) -> Reply:
        speed = self.sim.speed / max(self.sim.faults.slowdown, 1e-6)
        answer = answers[0]
        return Reply(
            runtime=self.sim.runtime,
            model=self.sim.slot.model,
            answers=answers,
            chat=chat,
            request_number=self.sim.stats.requests,
            # Only what the cache did not hold is computed, as on the real server.
            prompt_s=self.sim.latency.prompt_s(answer.computed_prompt_tokens, speed),
            gen_s=[self.sim.latency.gen_s(a.completion_tokens, speed) for a in answers],
            reasoning_field="reasoning"
            if self.sim.reasoning_style == "reasoning"
            else "reasoning_content",
            max_chunks=self.sim.max_chunks,
            on_finished=self._finished,
            leave=leave,
            on_dropped=self._dropped,
            arrived=arrived,
        )

    def _drop(self, request: web.Request) -> web.Response:
        if request.transport is not None:
            request.transport.abort()
        return web.Response(status=500)

    def _dropped(self) -> None:
        self.sim.stats.dropped += 1

    def _finished(self, answer: SimAnswer, done: Finished) -> None:
        stats = self.sim.stats
        stats.completed += 1
        # A request's prompt counts once, however many choices read it.
        stats.prompt_tokens += 0 if answer.shares_prompt else answer.prompt_tokens
        stats.cached_tokens += 0 if answer.shares_prompt else (answer.cached_tokens or 0)
        stats.completion_tokens += answer.completion_tokens
        self.sim.prometheus.finished(done)


__all__ = ["Fault", "Generation", "json_object"]
