"""What the slot simulator answers: latency model, faults, chat and completion bodies, errors.

The slot simulator is a DEV AND TEST TOOL standing in for GPU model servers. Not a model.

``model-foundry simulate-slots`` serves every slot of a slot file as an OpenAI-compatible server
over real HTTP, on the host:port of its ``base_url``, so the pipeline, its tests and the slot
benchmark run without a GPU:

- ``/v1/chat/completions`` (streaming or not; usage in the last chunk when ``include_usage``),
  ``/v1/completions``, ``/v1/models``;
- ``/health`` (503 while "loading" for ``start_delay_s``), ``/metrics`` under the names the
  slot's runtime exports (``vllm:num_requests_running``, ``llamacpp:requests_processing``);
- the runtime's context endpoint (llama.cpp ``/props``, vLLM ``/v1/models`` with
  ``max_model_len``) stating the slot's simulated window, ``/tokenize`` (and llama.cpp's
  ``/apply-template``) with the stated tokenizer of ``tokenizer.py``; llama.cpp ``timings``
  and ``/slots``, and the prompt tokens each llama.cpp place's cache held (``cache_n``,
  ``prompt_cache.py``; vLLM's default server does not report them);
- errors in the runtime's body style: vLLM ``{"object": "error", "message", "type", "code"}``,
  llama.cpp ``{"error": {"code", "message", "type"}}``.

Every difference between runtimes is asked from the slot's ``Runtime`` object
(``lib/slots/runtimes/``), the same one the pipeline uses.

Each simulated slot has a context window: its ``context_tokens``, or else room for its
``max_tokens`` answer plus ``SIM_PROMPT_ROOM`` prompt tokens, small enough that the demo's
longer sessions are summarised in parts. A prompt is not refused for its length (only the
``context_marker`` fault refuses one); the pipeline's sizing is what keeps prompts inside.

Like the real servers, requests beyond ``parallel`` wait in a queue. Latency is
``prompt_tokens / prompt_tps + completion_tokens / gen_tps`` divided by ``speed``. Output is
derived from the prompt (``echo: <last user message, words reversed>``, at most
``SIM_ANSWER_TOKENS`` tokens of it, so a summary is shorter than a long text it summarises;
the translator answers ``[<target lang>] <text>``; a seeded request, a dataset's sample, ends
with the one word ``~<model>#<n>``, so two models' samples differ) so tests can check
it. A request whose answer a JSON schema constrains (the runtime's ``structured_output``
shape) gets a value that follows the schema (``schema.py``), as from a server with
constrained decoding. Reasoning is
emitted when thinking is on: vLLM's ``reasoning`` field, llama.cpp's ``reasoning_content``, or
Gemma 4 channel markers.

Faults are injectable through the constructor, CLI flags and ``POST /_sim/faults``; the most
requests a slot ever had in flight (queued or running) is at ``GET /_sim/stats``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from model_foundry.devtools.simulator import tokenizer
from model_foundry.devtools.simulator.schema import instance as schema_instance
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.request import DEFAULT_ANSWER_RESERVE
from model_foundry.lib.slots.runtimes import runtime_for

ReasoningStyle = Literal["reasoning", "reasoning_content", "gemma-channel", "none"]
# A registered runtime's name: whose error bodies and wordings a slot answers with.
ErrorStyle = str

_text_of = tokenizer.text_of

# Prompt tokens a simulated slot takes besides its answer's max_tokens, when the slot file
# sets no context_tokens.
SIM_PROMPT_ROOM = 640
# The longest echo, in the tokenizer's tokens.
SIM_ANSWER_TOKENS = 96

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


def default_latency(slot: Slot) -> LatencyModel:
    return DEFAULT_LATENCY.get(slot.runtime, LatencyModel())


def default_window(slot: Slot) -> int:
    """The simulated context window one request of ``slot`` may use."""
    if slot.context_tokens is not None:
        return slot.context_tokens
    return (slot.request_defaults.max_tokens or DEFAULT_ANSWER_RESERVE) + SIM_PROMPT_ROOM


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
    # The prompt's tokens (their texts), which a prompt cache compares.
    prompt_pieces: tuple[str, ...] = ()
    # Of prompt_tokens, those the place it ran in held already (``prompt_cache.py``); None
    # where the simulated server keeps no such count.
    cached_tokens: int | None = None
    # A later choice of a request with ``n`` choices: its prompt pass was the first choice's.
    shares_prompt: bool = False

    @property
    def computed_prompt_tokens(self) -> int:
        """The prompt tokens the server had to compute: those its cache did not hold (none,
        for a choice that shares the first choice's prompt pass)."""
        if self.shares_prompt:
            return 0
        return self.prompt_tokens - (self.cached_tokens or 0)


def count_tokens(text: str) -> int:
    """Words stand in for tokens: deterministic and cheap."""
    return len(text.split())


def echo_text(text: str) -> str:
    """``echo:`` and the text's words reversed, cut after ``SIM_ANSWER_TOKENS`` tokens."""
    kept: list[str] = []
    budget = SIM_ANSWER_TOKENS
    for word in reversed(text.split()):
        budget -= tokenizer.count(word)
        if budget < 0 and kept:
            break
        kept.append(word)
    return "echo: " + " ".join(kept)


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


def answer_chat(
    body: dict[str, Any], style: ReasoningStyle, schema: Mapping[str, Any] | None = None
) -> SimAnswer:
    """The echo of the last user message; with a JSON ``schema`` (constrained decoding), a
    value that follows it, drawn from the whole conversation, as JSON text."""
    messages = body.get("messages") or []
    user = [m for m in messages if m.get("role") == "user"]
    last = _text_of(user[-1].get("content")) if user else ""
    prompt = tuple(tokenizer.chat_pieces(messages))
    prompt_tokens = len(prompt)
    reasoning = _reasoning_for(last) if thinking_requested(body) and style != "none" else None
    if schema is not None:
        seed = json.dumps(messages, sort_keys=True, ensure_ascii=False)
        text = json.dumps(schema_instance(schema, seed), ensure_ascii=False)
        # Constrained output is never cut mid-value: a server's grammar ends the JSON.
        words, cut = text.split(" "), False
    else:
        text = echo_text(last)
        if body.get("seed") is not None:
            # A seeded request is a sample (a dataset's): each model answers it its own way,
            # as different models do, so their answers can be compared. One word, so it costs
            # one generated token: the simulator's latency is per token, and a longer tag made
            # every dataset test spend its time generating it.
            text += f" ~{body.get('model')}#{body['seed']}"
        words, cut = _limit(text.split(), body.get("max_tokens"))
    content = " ".join(words)
    completion_tokens = len(words) + (count_tokens(reasoning) if reasoning else 0)
    if reasoning and style == "gemma-channel":
        content = f"<|channel>thought\n{reasoning}<channel|>{content}"
        reasoning = None
    return SimAnswer(
        content, reasoning, prompt_tokens, completion_tokens, "length" if cut else "stop", prompt
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
    held = tuple(tokenizer.pieces(prompt))
    return SimAnswer(text, None, len(held), max(1, count_tokens(text)), finish, held)


def default_reasoning_style(slot: Slot) -> ReasoningStyle:
    style = slot.server.reasoning_style(slot.model)
    known: tuple[ReasoningStyle, ...] = ("reasoning", "reasoning_content", "gemma-channel")
    return next((k for k in known if k == style), "none")


def error_body(style: ErrorStyle, status: int, message: str, kind: str) -> dict[str, Any]:
    return runtime_for(style).error_body(status, message, kind)


def split_text(text: str, n: int) -> list[str]:
    """Up to ``n`` stream pieces that join back to ``text`` (few chunks keep the CPU cost low)."""
    if not text:
        return []
    words = re.split(r"(?<= )", text)
    size = max(1, -(-len(words) // max(n, 1)))
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]
