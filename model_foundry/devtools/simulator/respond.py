"""Writing one simulated answer: a JSON body or an SSE stream, paced by the latency model."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web

from model_foundry.devtools.simulator.answers import SimAnswer, split_text
from model_foundry.devtools.simulator.metrics import Finished
from model_foundry.lib.slots.runtimes import Runtime


@dataclass
class Reply:
    """What one request gets back and when: built by the slot, written by :meth:`write`."""

    runtime: Runtime
    model: str
    # One per choice (``n``); the first one's prompt pass is every choice's.
    answers: list[SimAnswer]
    chat: bool
    request_number: int
    prompt_s: float
    # Per choice: how long generating its answer takes.
    gen_s: list[float]
    reasoning_field: str
    max_chunks: int
    # Called with each choice's answer and numbers once that answer is complete.
    on_finished: Callable[[SimAnswer, Finished], None]
    # Called right before the last bytes go out (see ``queue.Visit``).
    leave: Callable[[], None]
    # Called when the ``drop`` fault cuts the stream.
    on_dropped: Callable[[], None]
    arrived: float
    _created: int = field(default=0, init=False)
    _begin: float = field(default=0.0, init=False)

    @property
    def answer(self) -> SimAnswer:
        return self.answers[0]

    @property
    def usage(self) -> dict[str, Any]:
        """The usage of the whole response: the first choice's where the server reports each
        choice's own (llama.cpp keeps only the first's in a whole JSON answer), else one for
        all choices (vLLM: the prompt once, every choice's generated tokens)."""
        if self.runtime.usage_per_choice:
            return self.usage_of(0)
        a = self.answer
        generated = sum(x.completion_tokens for x in self.answers)
        return usage_body(self.runtime, a.prompt_tokens, generated, a.cached_tokens)

    def usage_of(self, choice: int) -> dict[str, Any]:
        a = self.answers[choice]
        return usage_body(self.runtime, a.prompt_tokens, a.completion_tokens, a.cached_tokens)

    def timings(self, choice: int = 0) -> dict[str, Any] | None:
        if not self.runtime.sends_timings:
            return None
        a, prompt_s, gen_s = self.answers[choice], self.prompt_s, self.gen_s[choice]
        # llama.cpp's prompt_n counts the tokens computed, cache_n those reused. A later
        # choice reports the first choice's prompt figures: llama-server copies the first
        # choice's stats with its state (copy_state_to in server-context.cpp).
        p = self.answers[0] if a.shares_prompt else a
        computed = p.computed_prompt_tokens
        timings: dict[str, Any] = {} if p.cached_tokens is None else {"cache_n": p.cached_tokens}
        return timings | {
            "prompt_n": computed,
            "prompt_ms": prompt_s * 1000,
            "prompt_per_second": computed / prompt_s if prompt_s else None,
            "predicted_n": a.completion_tokens,
            "predicted_ms": gen_s * 1000,
            "predicted_per_second": a.completion_tokens / gen_s if gen_s else None,
        }

    def _envelope(self, obj: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": f"{'chatcmpl' if self.chat else 'cmpl'}-{self.request_number}",
            "object": obj,
            "created": self._created,
            "model": self.model,
            "choices": choices,
        }

    def _finished(self, begin: float, now: float, choice: int = 0) -> None:
        a = self.answers[choice]
        self.on_finished(
            a,
            Finished(
                prompt_tokens=a.computed_prompt_tokens,
                cached_tokens=a.cached_tokens or 0,
                completion_tokens=a.completion_tokens,
                finish_reason=a.finish_reason,
                # Like vLLM's: from arrival, queueing included, to the first token.
                ttft_s=begin - self.arrived + self.prompt_s,
                e2e_s=now - self.arrived,
                prompt_s=0.0 if a.shares_prompt else self.prompt_s,
                gen_s=self.gen_s[choice],
            ),
        )

    async def write(
        self, request: web.Request, *, stream: bool, include_usage: bool, drop: bool
    ) -> web.StreamResponse:
        self._created = int(time.time())
        loop = asyncio.get_running_loop()
        self._begin = loop.time()
        if not stream:
            return await self._whole()
        if len(self.answers) > 1:
            return await stream_choices(self, request, include_usage=include_usage)
        return await self._stream(request, include_usage=include_usage, drop=drop)

    async def _sleep_until(self, offset_s: float) -> None:
        # Absolute deadlines: timer overshoot on one chunk must not add up over a stream.
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, self._begin + offset_s - loop.time()))

    async def _whole(self) -> web.Response:
        await self._sleep_until(self.prompt_s + max(self.gen_s))
        choices = [whole_choice(self, index) for index in range(len(self.answers))]
        payload = self._envelope("chat.completion" if self.chat else "text_completion", choices)
        payload["usage"] = self.usage
        timings = self.timings()
        if timings:
            payload["timings"] = timings
        now = asyncio.get_running_loop().time()
        for index in range(len(self.answers)):
            self._finished(self._begin, now, index)
        self.leave()
        return web.json_response(payload)

    def _piece(
        self, text: str, *, reasoning: bool = False, finish: str | None = None, index: int = 0
    ) -> dict:
        if self.chat:
            delta: dict[str, Any] = {self.reasoning_field: text} if reasoning else {"content": text}
            return {"index": index, "delta": delta, "finish_reason": finish}
        return {"index": index, "text": text, "logprobs": None, "finish_reason": finish}

    async def _stream(
        self, request: web.Request, *, include_usage: bool, drop: bool
    ) -> web.StreamResponse:
        resp, send = await open_stream(self, request)
        a = self.answer
        await self._sleep_until(self.prompt_s)
        pieces: list[tuple[str, bool]] = [(a.reasoning, True)] if a.reasoning else []
        pieces += [(p, False) for p in split_text(a.content, self.max_chunks)]
        if self.chat:
            await send(
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            )
        per_piece = self.gen_s[0] / max(len(pieces), 1)
        for i, (text, is_reasoning) in enumerate(pieces):
            await send(self._piece(text, reasoning=is_reasoning))
            if drop and i == 0:
                # Cut the connection mid-stream, the way a crashed server does.
                self.on_dropped()
                self.leave()
                if request.transport is not None:
                    request.transport.abort()
                return resp
            await self._sleep_until(self.prompt_s + per_piece * (i + 1))
        await send(self._piece("", finish=a.finish_reason))
        self._finished(self._begin, asyncio.get_running_loop().time())
        self.leave()
        timings = self.timings()
        if include_usage or timings:
            extra: dict[str, Any] = {"usage": self.usage} if include_usage else {}
            if timings:
                extra["timings"] = timings
            await send(None, extra)
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


def usage_body(runtime: Runtime, prompt: int, generated: int, cached: int | None) -> dict:
    """A response's ``usage`` object as ``runtime``'s server writes it."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": generated,
        "total_tokens": prompt + generated,
    }
    if runtime.reports_cached_tokens and cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def whole_choice(reply: Reply, index: int) -> dict[str, Any]:
    """Choice ``index`` of a whole (not streamed) JSON answer."""
    a = reply.answers[index]
    if reply.chat:
        message: dict[str, Any] = {"role": "assistant", "content": a.content}
        if a.reasoning:
            message[reply.reasoning_field] = a.reasoning
        choice: dict[str, Any] = {"index": index, "message": message}
    else:
        choice = {"index": index, "text": a.content, "logprobs": None}
    choice["finish_reason"] = a.finish_reason
    return choice


class Send(Protocol):
    """Sends one SSE chunk: a choice (or none) and extra fields (usage, timings)."""

    def __call__(
        self, choice: dict[str, Any] | None, extra: dict[str, Any] | None = None
    ) -> Awaitable[None]: ...


async def open_stream(reply: Reply, request: web.Request) -> tuple[web.StreamResponse, Send]:
    """The SSE response, prepared, and how to send one chunk of ``reply`` on it."""
    resp = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await resp.prepare(request)
    obj = "chat.completion.chunk" if reply.chat else "text_completion"

    async def send(choice: dict[str, Any] | None, extra: dict[str, Any] | None = None) -> None:
        chunk = reply._envelope(obj, [choice] if choice else [])
        chunk.update(extra or {})
        await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())

    return resp, send


def _pieces(reply: Reply, choice: int) -> list[tuple[str, bool]]:
    a = reply.answers[choice]
    pieces: list[tuple[str, bool]] = [(a.reasoning, True)] if a.reasoning else []
    return pieces + [(p, False) for p in split_text(a.content, reply.max_chunks)]


async def stream_choices(
    reply: Reply, request: web.Request, *, include_usage: bool
) -> web.StreamResponse:
    """A stream of several choices, their pieces interleaved by time. As llama.cpp does,
    each choice's last chunk is followed by that choice's own usage and timings; as vLLM
    does, one usage for all comes at the end."""
    resp, send = await open_stream(reply, request)
    # (when, choice, piece number): the piece number past the last is the choice's end.
    events: list[tuple[float, int, int]] = []
    for j in range(len(reply.answers)):
        pieces = _pieces(reply, j)
        per_piece = reply.gen_s[j] / max(len(pieces), 1)
        events += [(reply.prompt_s + per_piece * i, j, i) for i in range(len(pieces))]
        events.append((reply.prompt_s + reply.gen_s[j], j, len(pieces)))
    await reply._sleep_until(reply.prompt_s)
    if reply.chat:
        for j in range(len(reply.answers)):
            role = {"role": "assistant", "content": ""}
            await send({"index": j, "delta": role, "finish_reason": None})
    for when, j, i in sorted(events):
        await reply._sleep_until(when)
        pieces = _pieces(reply, j)
        if i < len(pieces):
            text, is_reasoning = pieces[i]
            await send(reply._piece(text, reasoning=is_reasoning, index=j))
            continue
        await send(reply._piece("", finish=reply.answers[j].finish_reason, index=j))
        reply._finished(reply._begin, asyncio.get_running_loop().time(), j)
        if reply.runtime.usage_per_choice:
            extra: dict[str, Any] = {"usage": reply.usage_of(j)} if include_usage else {}
            timings = reply.timings(j)
            if timings:
                extra["timings"] = timings
            if extra:
                await send(None, extra)
    reply.leave()
    if include_usage and not reply.runtime.usage_per_choice:
        await send(None, {"usage": reply.usage})
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp


__all__ = ["Reply", "stream_choices"]
