"""A client per slot, producing one ``Attempt`` per request (one per choice of an ``n``
request), on the slot's own ``Transport`` (aiohttp).

Every call streams (unless the slot says ``stream: false``) with
``stream_options={"include_usage": True}`` so the time to first token is measured and the token
counts arrive in the last chunk. What the response carries is read here, from plain dicts:
reasoning in the fields the slot's runtime names (vLLM's ``reasoning``, the older
``reasoning_content`` of llama.cpp and older vLLM), llama.cpp's ``timings``, and the prompt
tokens the server's cache held, where the slot's runtime says they are
(``Runtime.cached_tokens``; None when the response does not say). The request itself is built
in ``request``, the model quirks live in ``quirks``, errors are read in ``errors``, the stream
in ``sse``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from model_foundry.lib.slots.attempt import Attempt, reject_empty_answer
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.errors import describe_error, is_retryable
from model_foundry.lib.slots.quirks import (
    derive_rates,
    parse_timings,
    server_ttft_s,
    split_gemma_thinking,
)
from model_foundry.lib.slots.request import Rendered, build_request
from model_foundry.lib.slots.runtimes import Runtime
from model_foundry.lib.slots.runtimes.shapes import KEEPALIVE_EXPIRY_S
from model_foundry.lib.slots.sse import sse_events
from model_foundry.lib.slots.transport import Transport, wire_body


@dataclass
class _Collected:
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    timings: Mapping[str, Any] | None = None
    first_token_at: float | None = None
    plamo: bool = False
    reasoning_fields: tuple[str, ...] = ("reasoning", "reasoning_content")
    # The usage object as JSON, for the fields beyond the two counts (prompt_tokens_details).
    usage: Mapping[str, Any] | None = None
    runtime: Runtime | None = None
    # A later choice of an ``n`` request whose prompt pass was the first choice's: all its
    # prompt tokens were reused, not computed (``_Choices.share_usage``).
    shared_prompt: bool = False

    def take_usage(self, usage: Mapping[str, Any] | None) -> None:
        if isinstance(usage, Mapping):
            self.prompt_tokens = usage.get("prompt_tokens")
            self.completion_tokens = usage.get("completion_tokens")
            self.usage = usage

    def cached_prompt_tokens(self) -> int | None:
        """What the runtime reads as reused prompt tokens; None where it cannot be true (more
        than the prompt held) or the response did not say."""
        if self.shared_prompt:
            return self.prompt_tokens
        if self.runtime is None:
            return None
        cached = self.runtime.cached_tokens(self.usage, self.timings)
        if cached is not None and self.prompt_tokens is not None and cached > self.prompt_tokens:
            return None
        return cached

    def take_choice(self, choice: Mapping[str, Any], *, delta: bool, now: float) -> None:
        """One choice of a chunk (``delta``) or of a whole answer (``message``); on
        completions the text sits on the choice itself."""
        src = choice.get("delta" if delta else "message")
        if isinstance(src, Mapping):
            text = src.get("content")
            if text:
                self.content.append(text)
                if self.first_token_at is None:
                    self.first_token_at = now
            for name in self.reasoning_fields:
                thought = src.get(name)
                if thought:
                    self.reasoning.append(thought)
                    if self.first_token_at is None:
                        self.first_token_at = now
                    break
        else:
            text = choice.get("text")
            if text:
                self.content.append(text)
                if self.first_token_at is None:
                    self.first_token_at = now
        finish = choice.get("finish_reason")
        if finish:
            self.finish_reason = finish


class SlotClient:
    """Talks to one slot. Use as ``async with SlotClient(slot) as c: await c.run(...)``."""

    def __init__(self, slot: Slot, *, request_timeout_s: float | None = None) -> None:
        self.slot = slot
        self.request_timeout_s = request_timeout_s or slot.timeouts.request_s
        self._transport = Transport(
            slot.base_url,
            slot.api_key(),
            parallel=slot.parallel,
            connect_s=slot.timeouts.connect_s,
            keepalive_s=KEEPALIVE_EXPIRY_S,
        )
        self._path = "/chat/completions" if slot.api == "chat" else "/completions"

    async def __aenter__(self) -> SlotClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def run(
        self,
        *,
        key: str,
        task: str,
        role: str,
        body: Body,
        params: Mapping[str, Any] | None = None,
        thinking: bool | None = None,
        attempt: int = 1,
        rendered: Rendered | None = None,
    ) -> Attempt:
        """Send one request (``rendered`` when fitting rendered it already) and return its
        ``Attempt``; errors become error attempts."""
        (result,) = await self.run_choices(
            keys=[key], task=task, role=role, body=body, params=params, thinking=thinking,
            attempt=attempt, rendered=rendered,
        )  # fmt: skip
        return result

    async def run_choices(
        self,
        *,
        keys: Sequence[str],
        task: str,
        role: str,
        body: Body,
        params: Mapping[str, Any] | None = None,
        thinking: bool | None = None,
        attempt: int = 1,
        rendered: Rendered | None = None,
    ) -> list[Attempt]:
        """Send one request with one choice per key (``n`` when more than one) and return an
        ``Attempt`` per key, choice i answering ``keys[i]``; errors fail them all."""
        slot = self.slot
        results = [_failed(key, task, role, slot, attempt) for key in keys]
        t0 = time.perf_counter()
        got = _Choices(
            [
                _Collected(
                    plamo=slot.prompt_format == "plamo-translate",
                    reasoning_fields=slot.server.reasoning_fields,
                    runtime=slot.server,
                )
                for _ in keys
            ]
        )
        req: dict[str, Any] = {}
        try:
            req = (
                dict(rendered.kwargs)
                if rendered is not None
                else build_request(slot, body, params, thinking=thinking)
            )
            if len(keys) > 1:
                req["n"] = len(keys)
            async with asyncio.timeout(self.request_timeout_s):
                await self._send(req, got, t0)
        except Exception as exc:
            failed = describe_error(exc)
            for result in results:
                result.error_class, result.error, result.http_status = failed
                result.retryable = is_retryable(exc)
        else:
            for result in results:
                result.status = "ok"
        t_end = time.perf_counter()
        got.share_usage()
        for result, collected in zip(results, got.each, strict=True):
            finish(result, collected, t0, t_end)
            if result.ok and not (result.content or "").strip():
                reject_empty_answer(result, req.get("max_tokens"))
        return results

    async def _send(self, req: dict[str, Any], got: _Choices, t0: float) -> None:
        chat = self.slot.api == "chat"
        async with self._transport.post(self._path, wire_body(req)) as resp:
            if not req.get("stream"):
                response = orjson.loads(await resp.read())
                got.take_usage(response.get("usage"), response.get("timings"))
                now = time.perf_counter()
                for choice in response.get("choices") or ():
                    got.take_choice(choice, delta=False, now=now)
                for collected in got.each:
                    collected.first_token_at = None
                return
            one = got.each[0] if len(got.each) == 1 else None
            async for event in sse_events(resp.content.iter_any()):
                now = time.perf_counter()
                choices = event.get("choices")
                if choices:
                    if one is not None and len(choices) == 1:
                        one.take_choice(choices[0], delta=chat, now=now)
                    else:
                        for choice in choices:
                            got.take_choice(choice, delta=chat, now=now)
                usage, timings = event.get("usage"), event.get("timings")
                if usage is not None or timings:
                    got.take_usage(usage, timings)


def _failed(key: str, task: str, role: str, slot: Slot, attempt: int) -> Attempt:
    """An attempt that failed until its answer says otherwise."""
    return Attempt(
        key=key, task=task, role=role, slot=slot.name, model=slot.model, runtime=slot.runtime,
        status="error", attempt=attempt,
    )  # fmt: skip


@dataclass
class _Choices:
    """What a response carried, per choice (``index``), and its usage: once per choice
    (llama.cpp's stream: right after that choice's last chunk) or once for all of them."""

    each: list[_Collected]
    # The usage and timings that came once for every choice together.
    whole: _Collected | None = None
    last_finished: int = 0
    usages: int = 0

    def take_choice(self, choice: Mapping[str, Any], *, delta: bool, now: float) -> None:
        index = choice.get("index") or 0
        index = index if isinstance(index, int) and 0 <= index < len(self.each) else 0
        self.each[index].take_choice(choice, delta=delta, now=now)
        if choice.get("finish_reason"):
            self.last_finished = index

    def take_usage(
        self, usage: Mapping[str, Any] | None, timings: Mapping[str, Any] | None
    ) -> None:
        one = len(self.each) == 1
        per_choice = one or self.each[0].runtime is None or self.each[0].runtime.usage_per_choice
        target = self.each[self.last_finished if not one else 0]
        if not per_choice:
            target = self.whole = self.whole or _Collected(runtime=self.each[0].runtime)
        if usage is not None:
            target.take_usage(usage)
            self.usages += 1
        if timings:
            target.timings = timings

    def share_usage(self) -> None:
        """Usage that came once for all choices: the first choice's row carries it (its
        generated tokens are those of every choice); every other choice read the same prompt
        and computed none of it (the first choice's prompt pass is theirs), and its own
        generated tokens were not reported, so they stay None."""
        whole = self.whole
        if whole is None and len(self.each) > 1 and self.usages == 1:
            # A whole JSON answer from llama.cpp keeps only its first choice's usage.
            whole = self.each[0]
        if len(self.each) == 1:
            return
        if whole is None:
            # Usage per choice (llama.cpp's stream): each choice keeps its own counts, but the
            # later ones were copied from the first choice's prompt pass. The server reports
            # the first choice's cache_n and prompt_n for them too: its server-context.cpp
            # copies the state and the figures to each child once the prompt is processed.
            for other in self.each[1:]:
                other.shared_prompt = True
            return
        first = self.each[0]
        first.prompt_tokens, first.completion_tokens = whole.prompt_tokens, whole.completion_tokens
        first.usage, first.timings = whole.usage, whole.timings
        for other in self.each[1:]:
            other.prompt_tokens = whole.prompt_tokens
            other.completion_tokens = None
            other.shared_prompt = True


def finish(result: Attempt, got: _Collected, t0: float, t_end: float) -> Attempt:
    """Fill text, reasoning, token counts and speeds from what the response carried."""
    result.latency_s = t_end - t0
    result.ttft_s = got.first_token_at - t0 if got.first_token_at is not None else None
    if result.ttft_s is None:
        # Not streamed: where the server reports its own prefill time (llama.cpp's
        # ``timings.prompt_ms``), that is the time to first token, less the round trip.
        result.ttft_s = server_ttft_s(got.timings, result.latency_s)
    content = "".join(got.content)
    reasoning = "".join(got.reasoning) or None
    content, inline = split_gemma_thinking(content)
    if inline:
        reasoning = f"{reasoning}\n{inline}" if reasoning else inline
    if result.status == "ok" and got.plamo:
        # plamo-2-translate ends its answer with a newline before the next op marker.
        content = content.strip()
    result.content = content if (content or result.status == "ok") else None
    result.reasoning = reasoning
    result.finish_reason = got.finish_reason
    result.prompt_tokens = got.prompt_tokens
    result.completion_tokens = got.completion_tokens
    result.cached_prompt_tokens = got.cached_prompt_tokens()
    prompt_tps, gen_tps = parse_timings(got.timings)
    derived_prompt, derived_gen = derive_rates(
        got.prompt_tokens, got.completion_tokens, result.latency_s, result.ttft_s
    )
    result.prompt_tps = prompt_tps if prompt_tps is not None else derived_prompt
    result.gen_tps = gen_tps if gen_tps is not None else derived_gen
    return result


__all__ = ["SlotClient", "finish"]
