"""A client per slot on the official ``openai`` SDK, producing one ``Attempt`` per request.

Every call streams (unless the slot says ``stream: false``) with
``stream_options={"include_usage": True}`` so the time to first token is measured and the token
counts arrive in the last chunk. Model quirks handled here:

- reasoning arrives in the fields the slot's runtime names (vLLM's ``reasoning``, the older
  ``reasoning_content`` of llama.cpp and older vLLM), or inline in Gemma 4's
  ``<|channel>thought ... <channel|>`` markers (any server without a Gemma reasoning parser);
- a ``timings`` object (llama.cpp) gives exact prompt / generation speeds;
- the prompt tokens the server's cache held are read where the slot's runtime says they are
  (``Runtime.cached_tokens``), and stay None when the response does not say;
- thinking is switched per role through ``chat_template_kwargs``;
- templates that reject the system role get it folded into the first user turn;
- plamo-2-translate is driven through ``/v1/completions`` with its raw prompt format.

The formatting and parsing helpers are pure functions, tested without a server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

try:  # openai >= 3 ships on httpx2; older releases on httpx.
    import httpx2 as _httpx
except ImportError:  # pragma: no cover - depends on the installed SDK
    import httpx as _httpx  # type: ignore[no-redef]

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.runtimes import Runtime
from model_foundry.lib.slots.runtimes.shapes import KEEPALIVE_EXPIRY_S

PLAMO_OP = "<|plamo:op|>"
PLAMO_STOP = [PLAMO_OP]
GEMMA_THOUGHT_OPEN = "<|channel>thought"
GEMMA_CHANNEL_CLOSE = "<channel|>"

Status = Literal["ok", "error"]


@dataclass
class Attempt:
    """One request to one slot: what was asked, what came back, how fast. One DuckDB row."""

    key: str
    task: str
    role: str
    slot: str
    model: str
    runtime: str
    status: Status
    attempt: int = 1
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    error_class: str | None = None
    error: str | None = None
    http_status: int | None = None
    # Whether trying again may succeed (network, timeout, 5xx, 429); a 400 never does.
    retryable: bool = False
    # Set by the dispatcher: this failed attempt will be followed by another one.
    will_retry: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    ttft_s: float | None = None
    prompt_tps: float | None = None
    gen_tps: float | None = None
    finish_reason: str | None = None
    content: str | None = None
    reasoning: str | None = None
    # Of prompt_tokens, those the server reused from its prompt cache; None: it did not say.
    cached_prompt_tokens: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_row(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------------------------------
# Pure helpers: prompt building and response parsing.


def plamo_translate_prompt(
    text: str, source_lang: str = "English", target_lang: str = "Japanese"
) -> str:
    """plamo-2-translate's raw prompt; the model answers, then writes ``<|plamo:op|>``."""
    return (
        f"{PLAMO_OP}dataset\ntranslation\n"
        f"{PLAMO_OP}input lang={source_lang}\n{text.rstrip()}\n"
        f"{PLAMO_OP}output lang={target_lang}\n"
    )


def fold_system_into_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Move system messages into the first user turn, for templates that reject ``system``."""
    system = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    prefix = "\n\n".join(s for s in system if s)
    for m in rest:
        if m.get("role") == "user":
            m["content"] = f"{prefix}\n\n{m.get('content') or ''}" if prefix else m.get("content")
            return rest
    return [{"role": "user", "content": prefix}, *rest]


def split_gemma_thinking(text: str) -> tuple[str, str | None]:
    """Separate Gemma 4 ``<|channel>thought ... <channel|>`` blocks from the answer.

    A block cut off by ``max_tokens`` (no closing marker) is all reasoning.
    """
    if GEMMA_THOUGHT_OPEN not in text:
        return text, None
    answer: list[str] = []
    thoughts: list[str] = []
    rest = text
    while GEMMA_THOUGHT_OPEN in rest:
        before, _, after = rest.partition(GEMMA_THOUGHT_OPEN)
        answer.append(before)
        thought, closed, rest = after.partition(GEMMA_CHANNEL_CLOSE)
        thoughts.append(thought.strip())
        if not closed:
            rest = ""
    answer.append(rest)
    return "".join(answer).strip(), "\n".join(t for t in thoughts if t) or None


def parse_timings(timings: Mapping[str, Any] | None) -> tuple[float | None, float | None]:
    """(prompt tokens/s, generation tokens/s) from llama.cpp's ``timings`` object."""
    if not isinstance(timings, Mapping):
        return None, None

    def rate(per_second: str, n: str, ms: str) -> float | None:
        value = timings.get(per_second)
        if isinstance(value, int | float) and value > 0:
            return float(value)
        count, millis = timings.get(n), timings.get(ms)
        if isinstance(count, int | float) and isinstance(millis, int | float) and millis > 0:
            return count / (millis / 1000.0)
        return None

    return (
        rate("prompt_per_second", "prompt_n", "prompt_ms"),
        rate("predicted_per_second", "predicted_n", "predicted_ms"),
    )


def derive_rates(
    prompt_tokens: int | None,
    completion_tokens: int | None,
    latency_s: float | None,
    ttft_s: float | None,
) -> tuple[float | None, float | None]:
    """Speeds from the stream when the server reports none: prefill ends at the first token."""
    prompt_tps = gen_tps = None
    if prompt_tokens and ttft_s and ttft_s > 0:
        prompt_tps = prompt_tokens / ttft_s
    if completion_tokens and latency_s is not None:
        decode_s = latency_s - (ttft_s or 0.0)
        # The first token belongs to prefill, so count the rest over the decode time.
        if ttft_s is not None and completion_tokens > 1 and decode_s > 0:
            gen_tps = (completion_tokens - 1) / decode_s
        elif ttft_s is None and latency_s > 0:
            gen_tps = completion_tokens / latency_s
    return prompt_tps, gen_tps


def first_line(text: str) -> str | None:
    """The first line of ``text`` that is not blank, stripped; None when there is none."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return None


# Where servers put the reason: vLLM and llama.cpp use ``message`` (llama.cpp inside
# ``error``); FastAPI-style proxies use ``detail``, some use ``msg``.
_MESSAGE_KEYS = ("message", "error", "detail", "msg")


def error_message_from_body(body: object, _depth: int = 0) -> str | None:
    """The readable reason from either error style, as one line; None when the body has none.

    vLLM: ``{"object": "error", "message": ..., "type": ..., "code": ...}``;
    llama.cpp: ``{"error": {"code": ..., "message": ..., "type": ...}}`` (the SDK may already have
    unwrapped ``error``). Blank, empty or non-string messages and odd nestings yield None (or
    the first usable string found), never an exception: a reason must not fail the batch.
    """
    if _depth > 4:
        return None
    if isinstance(body, str):
        return first_line(body)
    if isinstance(body, Mapping):
        for key in _MESSAGE_KEYS:
            found = error_message_from_body(body.get(key), _depth + 1)
            if found:
                return found
        return None
    if isinstance(body, list | tuple):
        for item in body[:5]:
            found = error_message_from_body(item, _depth + 1)
            if found:
                return found
    return None


def is_retryable(exc: BaseException) -> bool:
    """Network trouble, timeouts, 5xx and 429 may pass; other 4xx (bad request) will not."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    if isinstance(exc, openai.APIConnectionError | TimeoutError | ConnectionError):
        return True
    if isinstance(exc, _httpx.TransportError | _httpx.StreamError):
        return True
    # An ``error`` event inside a stream: the server failed mid-generation.
    return isinstance(exc, openai.APIError)


def describe_error(exc: BaseException) -> tuple[str, str, int | None]:
    """(error class, one-line reason, HTTP status) for an error row; never raises."""
    import openai

    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    reason: str | None = None
    if isinstance(exc, TimeoutError):
        reason = "request timed out"
    elif isinstance(exc, openai.APIError):
        reason = error_message_from_body(exc.body)
        if reason is None and status is not None:
            # The SDK's own text would be "Error code: 400 - {...}": say it plainly instead.
            reason = f"HTTP {status} with no error message"
    if reason is None:
        try:
            reason = first_line(str(exc))
        except Exception:  # a broken __str__ must not turn into a failed batch
            reason = None
    cause = exc.__cause__
    if isinstance(exc, openai.APIConnectionError) and cause is not None:
        # The SDK says only "Connection error."; what happened (refused, reset, the server
        # closing the connection) is in the transport's own exception.
        try:
            said = first_line(str(cause)) or ""
        except Exception:
            said = ""
        reason = f"{reason} ({type(cause).__name__}{': ' + said if said else ''})"
    return type(exc).__name__, (reason or type(exc).__name__)[:2000], status


def empty_answer_reason(
    finish_reason: str | None, reasoning: str | None, max_tokens: int | None
) -> str:
    """Why a request that succeeded over HTTP brought no answer, in one sentence."""
    if finish_reason == "length" and reasoning and reasoning.strip():
        budget = f"all {max_tokens}" if max_tokens else "all its"
        return (
            f"the model spent {budget} max_tokens on reasoning and wrote no answer; "
            "raise max_tokens or switch thinking off for this role"
        )
    return "the slot returned an empty answer"


_REQUEST_KEYS = {"max_tokens", "temperature", "top_p", "stop", "seed"}
_LOCAL_KEYS = {
    "thinking",
    "chat_template_kwargs",
    "extra_body",
    "source_lang",
    "target_lang",
    # A JSON schema the answer must follow: each runtime spells the constraint its own way
    # (``Runtime.structured_output``), so it never goes to the server under this name.
    "json_schema",
}


def _is_translation(params: Mapping[str, Any]) -> bool:
    return "source_lang" in params or "target_lang" in params


# Worked examples shown before the text, as earlier turns: given the instruction alone, a
# small model hands the instruction back or answers in the text's own language; shown the
# pattern, it follows it. English and Japanese, the languages summaries are written in.
TRANSLATION_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Good morning.", "おはようございます。"),
    ("The backup finished without errors.", "バックアップはエラーなしで完了しました。"),
    ("Please restart the server tomorrow.", "明日サーバーを再起動してください。"),
)


def _examples(source_lang: str, target_lang: str) -> list[dict[str, Any]]:
    langs = {"English": 0, "Japanese": 1}
    if {source_lang, target_lang} != set(langs):
        return []
    src, tgt = langs[source_lang], langs[target_lang]
    return [
        {"role": role, "content": pair[side]}
        for pair in TRANSLATION_EXAMPLES
        for role, side in (("user", src), ("assistant", tgt))
    ]


def translation_messages(text: str, source_lang: str, target_lang: str) -> list[dict[str, Any]]:
    """Chat messages asking a general chat model for a translation and nothing else: the
    instruction, a few worked examples (English and Japanese), then the text."""
    return [
        {
            "role": "system",
            "content": (
                f"Translate the user's {source_lang} text into {target_lang}. "
                "Reply with the translation only, no notes."
            ),
        },
        *_examples(source_lang, target_lang),
        {"role": "user", "content": text},
    ]


def _chat_messages(slot: Slot, body: Body, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``body`` as the chat turns ``slot`` is sent."""
    messages = body.messages
    if messages is None:
        if body.prompt is None and _is_translation(params):
            # A translation that fell back to a chat slot: the bare text would be answered
            # as a chat turn and stored as its translation, so say what to do with it.
            messages = translation_messages(
                str(body.text),
                params.get("source_lang", slot.translation.source_lang),
                params.get("target_lang", slot.translation.target_lang),
            )
        else:
            messages = [{"role": "user", "content": body.raw}]
    if slot.fold_system_into_user:
        messages = fold_system_into_user(messages)
    return messages


def _completion_prompt(slot: Slot, body: Body, params: Mapping[str, Any]) -> str:
    """``body`` as the raw prompt a completions ``slot`` is sent."""
    if slot.prompt_format == "plamo-translate":
        source = body.text if body.text is not None else body.prompt
        if source is None:
            raise ValueError(f"slot {slot.name} (plamo-translate) needs the text to translate")
        return plamo_translate_prompt(
            source,
            params.get("source_lang", slot.translation.source_lang),
            params.get("target_lang", slot.translation.target_lang),
        )
    if body.prompt is not None:
        return body.prompt
    if body.messages is None:
        raise ValueError(f"slot {slot.name} (completions) needs a prompt")
    return "\n\n".join(str(m.get("content") or "") for m in body.messages)


def build_request(
    slot: Slot,
    body: Body,
    params: Mapping[str, Any] | None = None,
    *,
    thinking: bool | None = None,
) -> dict[str, Any]:
    """The keyword arguments for ``chat.completions.create`` or ``completions.create``.

    Precedence: slot defaults < role thinking < task params. Unknown task params go to
    ``extra_body`` so server-specific knobs pass through. A ``json_schema`` param constrains
    the answer in the slot runtime's own request shape (``Runtime.structured_output``).
    """
    params = dict(params or {})
    d = slot.request_defaults
    req: dict[str, Any] = {"model": slot.model}
    for k in _REQUEST_KEYS:
        value = getattr(d, k, None)
        if value is not None:
            req[k] = value
    req.update({k: v for k, v in params.items() if k in _REQUEST_KEYS})
    extra_body: dict[str, Any] = {**d.extra_body, **params.get("extra_body", {})}
    extra_body.update({k: v for k, v in params.items() if k not in _REQUEST_KEYS | _LOCAL_KEYS})

    if slot.api == "chat":
        req["messages"] = _chat_messages(slot, body, params)
        kwargs = dict(d.chat_template_kwargs)
        think = params.get("thinking", thinking)
        if think is not None:
            kwargs[slot.thinking_kwarg] = bool(think)
        kwargs.update(params.get("chat_template_kwargs", {}))
        if kwargs:
            extra_body["chat_template_kwargs"] = kwargs
    else:
        req["prompt"] = _completion_prompt(slot, body, params)
        if slot.prompt_format == "plamo-translate":
            stops = list(req.get("stop") or [])
            req["stop"] = stops + [s for s in PLAMO_STOP if s not in stops]
        if "max_tokens" not in req:
            raise ValueError(f"slot {slot.name}: completions need an explicit max_tokens")
    if slot.stream:
        req["stream"] = True
        req["stream_options"] = {"include_usage": True}
    schema = params.get("json_schema")
    if schema is not None:
        for name, value in slot.server.structured_output(schema).items():
            if name == "extra_body":
                extra_body.update(value)
            else:
                req[name] = value
    if extra_body:
        req["extra_body"] = extra_body
    return req


# Tokens kept for the answer when a request names no max_tokens (chat slots may leave it
# unset; the server then generates until its own limit).
DEFAULT_ANSWER_RESERVE = 512


@dataclass(frozen=True)
class Rendered:
    """A request as one slot is sent it: ``build_request``'s keyword arguments. Fitting
    counts it against the slot's context window and the slot's worker sends it, so a request
    is rendered once for each slot it may go to. Read it, never change it."""

    kwargs: Mapping[str, Any]

    @property
    def counted(self) -> Body:
        """What the slot's server counts: the chat messages, or the completions prompt."""
        if "messages" in self.kwargs:
            return Body(messages=self.kwargs["messages"])
        return Body(prompt=self.kwargs["prompt"])

    @property
    def reserve(self) -> int:
        """Tokens to keep free for the answer: its ``max_tokens``, or the default reserve."""
        value = self.kwargs.get("max_tokens")
        return int(value) if isinstance(value, int) and value > 0 else DEFAULT_ANSWER_RESERVE

    def pinned(self, pin: Mapping[str, Any] | None) -> Rendered:
        """This request with ``pin`` (``SlotWorker._pin``: the server slot it runs in, outside
        its key) among the server's own fields, where ``build_request`` puts a parameter it
        does not know."""
        if not pin:
            return self
        req = dict(self.kwargs)
        req["extra_body"] = {**req.get("extra_body", {}), **pin}
        return Rendered(req)


def render(
    slot: Slot,
    body: Body,
    params: Mapping[str, Any] | None = None,
    *,
    thinking: bool | None = None,
) -> Rendered:
    """``body`` rendered for ``slot`` (``build_request``), to count and to send."""
    return Rendered(build_request(slot, body, params, thinking=thinking))


def _extra(obj: Any, name: str) -> Any:
    """A field the OpenAI types do not declare (``reasoning``, ``timings``), if present."""
    if obj is None:
        return None
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value


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

    def take_usage(self, usage: Any) -> None:
        if usage is not None:
            self.prompt_tokens = getattr(usage, "prompt_tokens", None)
            self.completion_tokens = getattr(usage, "completion_tokens", None)
            dump = getattr(usage, "model_dump", None)
            self.usage = dump() if callable(dump) else None

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

    def take_choice(self, choice: Any, *, delta: bool, now: float) -> None:
        src = (
            choice.delta if delta and hasattr(choice, "delta") else getattr(choice, "message", None)
        )
        pieces: list[tuple[list[str], Any]] = []
        if src is not None:
            pieces.append((self.content, getattr(src, "content", None)))
            reasoning = next(
                (v for name in self.reasoning_fields if (v := _extra(src, name))), None
            )
            pieces.append((self.reasoning, reasoning))
        else:  # completions: the text sits on the choice itself
            pieces.append((self.content, getattr(choice, "text", None)))
        for sink, value in pieces:
            if value:
                sink.append(value)
                if self.first_token_at is None:
                    self.first_token_at = now
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason


class SlotClient:
    """Talks to one slot. Use as ``async with SlotClient(slot) as c: await c.run(...)``."""

    def __init__(self, slot: Slot, *, request_timeout_s: float | None = None) -> None:
        # The SDK loads with the first client, not with the code location: every run and
        # code server imports the definitions, and most runs (the inbox drains) send nothing.
        import openai

        self.slot = slot
        self.request_timeout_s = request_timeout_s or slot.timeouts.request_s
        timeout = _httpx.Timeout(self.request_timeout_s, connect=slot.timeouts.connect_s)
        # One connection per request the slot serves at once; more would only queue server-side.
        limits = _httpx.Limits(
            max_connections=slot.parallel,
            max_keepalive_connections=slot.parallel,
            keepalive_expiry=KEEPALIVE_EXPIRY_S,
        )
        self._http = openai.DefaultAsyncHttpxClient(limits=limits, timeout=timeout)
        self._client = openai.AsyncOpenAI(
            base_url=slot.base_url,
            api_key=slot.api_key(),
            timeout=timeout,
            # The dispatcher retries, with backoff, cooldown and slot failover; the SDK must not.
            max_retries=0,
            http_client=self._http,
        )

    async def __aenter__(self) -> SlotClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.close()

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
        endpoint = self._client.chat.completions if chat else self._client.completions
        response = await endpoint.create(**req)
        if not req.get("stream"):
            got.take_usage(response.usage, _extra(response, "timings"))
            now = time.perf_counter()
            for choice in response.choices:
                got.take_choice(choice, delta=False, now=now)
            for collected in got.each:
                collected.first_token_at = None
            return
        try:
            async for chunk in response:
                now = time.perf_counter()
                for choice in chunk.choices or ():
                    got.take_choice(choice, delta=chat, now=now)
                timings = _extra(chunk, "timings")
                if chunk.usage is not None or timings:
                    got.take_usage(chunk.usage, timings)
        finally:
            await response.close()


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

    def take_choice(self, choice: Any, *, delta: bool, now: float) -> None:
        index = getattr(choice, "index", 0) or 0
        index = index if 0 <= index < len(self.each) else 0
        self.each[index].take_choice(choice, delta=delta, now=now)
        if choice.finish_reason:
            self.last_finished = index

    def take_usage(self, usage: Any, timings: Mapping[str, Any] | None) -> None:
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


def reject_empty_answer(result: Attempt, max_tokens: int | None) -> Attempt:
    """An empty (or blank) answer is an error, retried like a dropped stream.

    Stored as ``ok`` it would be reused by every later run (the store reuses ``ok`` rows), so
    the prompt would never be asked again; as an error a later run asks again.
    """
    result.status = "error"
    result.error_class = "EmptyAnswer"
    result.error = empty_answer_reason(result.finish_reason, result.reasoning, max_tokens)
    result.content = None
    # Sampling differs between tries (and another slot may take the retry), so a plain empty
    # answer may pass next time. One cut off by max_tokens while still reasoning would only
    # burn the same budget again: it waits for the next run (or a changed slot file).
    result.retryable = not (
        result.finish_reason == "length" and bool(result.reasoning and result.reasoning.strip())
    )
    return result


__all__ = [
    "DEFAULT_ANSWER_RESERVE",
    "KEEPALIVE_EXPIRY_S",
    "PLAMO_STOP",
    "Attempt",
    "Rendered",
    "SlotClient",
    "build_request",
    "derive_rates",
    "describe_error",
    "empty_answer_reason",
    "error_message_from_body",
    "first_line",
    "fold_system_into_user",
    "is_retryable",
    "parse_timings",
    "plamo_translate_prompt",
    "reject_empty_answer",
    "render",
    "split_gemma_thinking",
    "translation_messages",
]
