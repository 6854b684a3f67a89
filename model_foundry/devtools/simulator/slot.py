"""One simulated slot: an aiohttp app with the routes its runtime's server has, and its faults.

Requests are accounted in ``queue.py``, answered in ``generation.py`` and written in
``respond.py``; what differs between
runtimes (routes, bodies, error wordings, timings, reasoning fields) is asked from the slot's
``Runtime`` object.
"""

from __future__ import annotations

import dataclasses
import random
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from model_foundry.devtools.simulator import tokenizer
from model_foundry.devtools.simulator.answers import (
    ErrorStyle,
    Faults,
    LatencyModel,
    ReasoningStyle,
    default_window,
)
from model_foundry.devtools.simulator.generation import Generation, json_object
from model_foundry.devtools.simulator.metrics import SlotMetrics
from model_foundry.devtools.simulator.prompt_cache import PromptCache
from model_foundry.devtools.simulator.queue import SlotQueue, SlotStats
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.runtimes import runtime_for


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
    # Tokens one request may use; None: ``answers.default_window``.
    window: int | None = None
    started: float = field(default_factory=time.monotonic)
    url: str = ""

    def __post_init__(self) -> None:
        self.runtime = self.slot.server
        self.errors = runtime_for(self.error_style)
        self.window = self.window or default_window(self.slot)
        self.rng = random.Random(self.seed)
        self.queue = SlotQueue(self.slot.parallel)
        self.prompt_cache = (
            PromptCache(self.slot.parallel) if self.runtime.reports_cached_tokens else None
        )
        self.prometheus = SlotMetrics(
            self.slot,
            running=lambda: self.stats.processing,
            waiting=lambda: self.stats.in_flight - self.stats.processing,
        )
        self.generation = Generation(self)

    @property
    def stats(self) -> SlotStats:
        return self.queue.stats

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
        body = self.errors.error_body(status, message, kind)
        return web.json_response(body, status=status)

    # -- routes -------------------------------------------------------------------------------

    def app(self) -> web.Application:
        ends = self.runtime.endpoints
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_get(ends.context, self.context)
        if ends.context != "/v1/models":
            app.router.add_get("/v1/models", self.models)
        app.router.add_post(ends.tokenize, self.tokenize)
        if ends.apply_template:
            app.router.add_post(ends.apply_template, self.apply_template)
        if ends.slots:
            app.router.add_get(ends.slots, self.slots)
        app.router.add_get("/health", self.health)
        app.router.add_get("/metrics", self.metrics)
        app.router.add_get("/_sim/stats", self.get_stats)
        app.router.add_post("/_sim/faults", self.post_faults)
        app.router.add_get("/_sim/faults", self.get_faults)
        app.router.add_post("/_sim/reset", self.post_reset)
        return app

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self.generation.handle(request, chat=True)

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self.generation.handle(request, chat=False)

    async def models(self, request: web.Request) -> web.Response:
        model = {
            "id": self.slot.model,
            "object": "model",
            "created": 0,
            "owned_by": self.slot.runtime,
        }
        return web.json_response({"object": "list", "data": [model]})

    async def context(self, request: web.Request) -> web.Response:
        assert self.window is not None
        return web.json_response(self.runtime.context_body(self.window, self.slot.model))

    async def apply_template(self, request: web.Request) -> web.Response:
        body = await json_object(request)
        if body is None or not isinstance(body.get("messages"), list):
            return self.error_response(400, "'messages' is required", "invalid_request_error")
        return web.json_response({"prompt": tokenizer.apply_template(body["messages"])})

    async def tokenize(self, request: web.Request) -> web.Response:
        """llama.cpp's ``content``/``add_special`` or vLLM's ``prompt``|``messages`` shape."""
        body = await json_object(request)
        if body is None:
            return self.error_response(400, "request body is not JSON", "invalid_request_error")
        if isinstance(body.get("messages"), list):
            tokens = tokenizer.tokenize(tokenizer.apply_template(body["messages"]))
        else:
            text = tokenizer.text_of(body.get("content", body.get("prompt")))
            special = bool(body.get("add_special", body.get("add_special_tokens", False)))
            tokens = tokenizer.tokenize(text, add_special=special)
        assert self.window is not None
        return web.json_response(self.runtime.tokenize_body(tokens, self.window))

    async def health(self, request: web.Request) -> web.Response:
        if self.loading:
            body = self.errors.error_body(503, "Loading model", "unavailable_error")
            return web.json_response(body, status=503)
        if self.runtime.health_body is None:
            return web.Response(status=200)
        return web.json_response(dict(self.runtime.health_body))

    async def metrics(self, request: web.Request) -> web.Response:
        return web.Response(
            body=self.prometheus.render(),
            headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
        )

    async def slots(self, request: web.Request) -> web.Response:
        busy = self.queue.busy_ids()
        return web.json_response(
            [
                {"id": i, "n_ctx": self.window, "is_processing": i in busy}
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
        self.queue.reset()
        return web.json_response(self.stats_dict())


__all__ = ["SimSlot", "SlotStats"]
