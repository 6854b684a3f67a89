"""vLLM's OpenAI-compatible server (vllm-project/vllm).

- window: ``GET /v1/models`` -> ``max_model_len`` of the slot's model (``--max-model-len``);
- counting: ``POST /tokenize`` with ``messages`` (rendered with the model's template) or
  ``prompt`` returns ``count``;
- errors: ``{"object": "error", "message", "type", "code"}``; a prompt too long reads "This
  model's maximum context length is 2048 tokens. However, you requested ..."
  (``vllm/entrypoints/openai/serving_engine.py``, 0.5 line; later releases keep the first
  sentence and reword the second);
- answers: ``reasoning`` (``reasoning_content`` before 0.10), usage in the last stream chunk
  when ``stream_options.include_usage``;
- prompt cache: ``usage.prompt_tokens_details.cached_tokens`` only when the server runs with
  ``--enable-prompt-tokens-details`` (off by default), and in the chat server of several
  releases only when it is not 0 (``if self.enable_prompt_tokens_details and
  num_cached_tokens:`` in ``serving_chat.py``): a response without it says nothing;
- metrics: ``vllm/v1/metrics/loggers.py`` ``PrometheusStatLogger`` (V1 engine, 0.10 line);
- structured output: ``structured_outputs: {"json": schema}`` in the extra body (docs
  "Structured Outputs"; it replaced ``guided_json``, which 0.12 removed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.runtimes.shapes import (
    Endpoints,
    HttpClient,
    MetricNames,
    usage_cached_tokens,
)

_CONTEXT_LIMIT = re.compile(r"maximum context length is (\d+) tokens", re.IGNORECASE)


class Vllm:
    name = "vllm"
    label = "vLLM"
    context_source = "vLLM /v1/models"
    endpoints = Endpoints(context="/v1/models")
    metrics = MetricNames(
        running="vllm:num_requests_running",
        waiting="vllm:num_requests_waiting",
        prompt_tokens="vllm:prompt_tokens",
        generation_tokens="vllm:generation_tokens",
        labels=("model_name", "engine"),
        request_success="vllm:request_success",
        ttft_seconds="vllm:time_to_first_token_seconds",
        e2e_seconds="vllm:e2e_request_latency_seconds",
    )
    reasoning_fields = ("reasoning", "reasoning_content")
    sends_timings = False
    # Only with --enable-prompt-tokens-details; a server started as the lab's are says nothing.
    reports_cached_tokens = False
    # With --reasoning-parser, structured outputs constrain the answer after the reasoning.
    schema_after_reasoning = True
    # vLLM's /health is an empty 200.
    health_body: Mapping[str, Any] | None = None
    # One prefix cache shared by every sequence: nothing to pin.
    slot_pin: str | None = None
    # ``n`` choices share the prompt's blocks (``vllm/v1/engine/parallel_sampling.py``: child
    # i samples with ``seed + i``). The usage of such a response covers all its choices.
    usage_per_choice = False

    def context_url(self, base_url: str) -> str:
        return f"{base_url.rstrip('/')}/models"

    def context_from(self, body: Any, model: str) -> int | None:
        """``max_model_len`` of ``model`` in the ``/v1/models`` list (the only one if single)."""
        data = body.get("data") if isinstance(body, Mapping) else None
        cards = [c for c in data or [] if isinstance(c, Mapping)]
        chosen = [c for c in cards if c.get("id") == model] or (cards if len(cards) == 1 else [])
        for card in chosen:
            value = card.get("max_model_len")
            if isinstance(value, int) and value > 0:
                return value
        return None

    def context_body(self, window: int, model: str) -> dict[str, Any]:
        card = {
            "id": model,
            "object": "model",
            "created": 0,
            "owned_by": self.name,
            "max_model_len": window,
        }
        return {"object": "list", "data": [card]}

    def count_tokens(self, http: HttpClient, root: str, model: str, body: Body) -> int:
        payload: dict[str, Any] = {"model": model}
        if body.messages is not None:
            payload["messages"] = body.messages
        else:
            payload["prompt"] = body.raw or ""
            payload["add_special_tokens"] = False
        resp = http.post(f"{root}{self.endpoints.tokenize}", json=payload)
        resp.raise_for_status()
        return int(resp.json()["count"])

    def tokenize_body(self, tokens: list[int], window: int) -> dict[str, Any]:
        return {"count": len(tokens), "max_model_len": window, "tokens": tokens}

    def cached_tokens(
        self, usage: Mapping[str, Any] | None, timings: Mapping[str, Any] | None
    ) -> int | None:
        return usage_cached_tokens(usage)

    def context_limit_from_error(self, message: str) -> int | None:
        found = _CONTEXT_LIMIT.search(message)
        return int(found.group(1)) if found else None

    def context_error(self, window: int, requested: int) -> tuple[str, str]:
        return (
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{requested} tokens in the messages. Please reduce the length of the messages.",
            "BadRequestError",
        )

    def error_body(self, status: int, message: str, kind: str) -> dict[str, Any]:
        return {"object": "error", "message": message, "type": kind, "param": None, "code": status}

    def reasoning_style(self, model: str) -> str:
        return "reasoning"

    def structured_output(
        self, schema: Mapping[str, Any], *, name: str = "answer"
    ) -> dict[str, Any]:
        return {"extra_body": {"structured_outputs": {"json": dict(schema)}}}

    def requested_schema(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        # The SDK merges extra_body into the request's top level.
        wanted = body.get("structured_outputs")
        schema = wanted.get("json") if isinstance(wanted, Mapping) else None
        return schema if isinstance(schema, Mapping) else None


VLLM = Vllm()

__all__ = ["VLLM", "Vllm"]
