"""llama.cpp's ``llama-server`` (ggml-org/llama.cpp, ``tools/server/README.md``).

- window: ``GET /props`` -> ``default_generation_settings.n_ctx``, one request's share after
  ``-c`` is split across ``--parallel`` slots;
- counting: ``POST /apply-template`` renders chat messages with the model's template, then
  ``POST /tokenize`` (``add_special``: the BOS token counts too) returns ``tokens``;
- errors: ``{"error": {"code", "message", "type"}}``; a prompt too long reads "request (2719
  tokens) exceeds the available context size (1024 tokens), try increasing it", or for an
  input alone larger than the context "input (2719 tokens) is larger than the max context size
  (1024 tokens). skipping" (``tools/server/server-context.cpp`` as vendored in
  llama-cpp-python 0.3.36);
- answers: ``reasoning_content``; a ``timings`` object with exact prompt / generation speeds;
- prompt cache: ``timings.cache_n``, "number of prompt tokens reused from cache" (README,
  "Timings and context usage"); ``usage.prompt_tokens`` counts them too. The 0.3.36 build
  also sends ``usage.prompt_tokens_details.cached_tokens``, from the same counter
  (``server-task.cpp`` ``usage_json_oaicompat``, ``server-common.cpp``
  ``server_slot_stats::to_json``), which older builds lack; a fully cached prompt still
  reports one token fewer than its length (``server-context.cpp``, "need to evaluate at least
  1 token");
  builds without a Gemma 4 reasoning parser leave ``<|channel>thought`` markers in the text;
- structured output: OpenAI's ``response_format`` with ``type: json_schema`` (the server turns
  the schema into a grammar).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.runtimes.shapes import (
    Endpoints,
    HttpClient,
    MetricNames,
    server_root,
    token_count,
    usage_cached_tokens,
)

_CONTEXT_LIMITS = (
    # The context size comes after the request's own token count.
    re.compile(r"exceeds the available context size \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"larger than the max context size \((\d+) tokens\)", re.IGNORECASE),
)


class LlamaCpp:
    name = "llamacpp"
    label = "llama.cpp"
    context_source = "llama.cpp /props"
    endpoints = Endpoints(context="/props", apply_template="/apply-template", slots="/slots")
    metrics = MetricNames(
        running="llamacpp:requests_processing",
        waiting="llamacpp:requests_deferred",
        prompt_tokens="llamacpp:prompt_tokens",
        generation_tokens="llamacpp:tokens_predicted",
        prompt_seconds="llamacpp:prompt_seconds",
        generation_seconds="llamacpp:tokens_predicted_seconds",
        decodes="llamacpp:n_decode",
        prompt_tps="llamacpp:prompt_tokens_seconds",
        generation_tps="llamacpp:predicted_tokens_seconds",
        prompt_cached_tokens="llamacpp:prompt_tokens_cached",
    )
    # Read in this order; "reasoning" too, for builds that follow vLLM's newer name.
    reasoning_fields = ("reasoning_content", "reasoning")
    sends_timings = True
    # Every response says how much of its prompt the slot's cache held (``cached_tokens``).
    reports_cached_tokens = True
    # The grammar applies to everything generated, reasoning included (ggml-org/llama.cpp
    # issue 22537, closed as wontfix in April 2026).
    schema_after_reasoning = False
    health_body: Mapping[str, Any] | None = MappingProxyType({"status": "ok"})
    # ``id_slot`` runs a request in that server slot, whose cache holds what the slot ran last;
    # a request for a busy one waits until it is free (``server-context.cpp``
    # ``get_available_slot``, "requested slot is unavailable, defer task").
    slot_pin: str | None = "id_slot"
    # ``n`` (``n_cmpl``, at most ``--parallel``) prefills once and copies the prompt to n
    # server slots, the request waiting until n are free at once; child j samples with
    # ``seed + j`` (``server-task.h`` ``add_child``). In a stream each choice's last chunk
    # is followed by its own usage (``server-task.cpp`` ``to_json_oaicompat_chat_stream``);
    # a whole JSON answer keeps the first choice's only.
    usage_per_choice = True

    def context_url(self, base_url: str) -> str:
        return f"{server_root(base_url)}{self.endpoints.context}"

    def context_from(self, body: Any, model: str) -> int | None:
        settings = body.get("default_generation_settings") if isinstance(body, Mapping) else None
        if isinstance(settings, Mapping):
            n_ctx = settings.get("n_ctx")
            if isinstance(n_ctx, int) and n_ctx > 0:
                return n_ctx
        return None

    def context_body(self, window: int, model: str) -> dict[str, Any]:
        return {"default_generation_settings": {"n_ctx": window}, "model_path": model}

    def count_tokens(self, http: HttpClient, root: str, model: str, body: Body) -> int:
        return len(self.tokens(http, root, body))

    def tokens(self, http: HttpClient, root: str, body: Body) -> list[int]:
        """The token ids the server prefills for ``body``: its chat template's rendering
        (``/apply-template``) tokenized with the special tokens it starts with."""
        text = body.raw or ""
        special = False
        if body.messages is not None:
            resp = http.post(
                f"{root}{self.endpoints.apply_template}", json={"messages": body.messages}
            )
            resp.raise_for_status()
            text = resp.json()["prompt"]
            special = True
        resp = http.post(
            f"{root}{self.endpoints.tokenize}", json={"content": text, "add_special": special}
        )
        resp.raise_for_status()
        return list(resp.json()["tokens"])

    def tokenize_body(self, tokens: list[int], window: int) -> dict[str, Any]:
        return {"tokens": tokens}

    def cached_tokens(
        self, usage: Mapping[str, Any] | None, timings: Mapping[str, Any] | None
    ) -> int | None:
        # The field the README documents first; the OpenAI one where a build sends no timings.
        cache_n = timings.get("cache_n") if isinstance(timings, Mapping) else None
        found = token_count(cache_n)
        return found if found is not None else usage_cached_tokens(usage)

    def context_limit_from_error(self, message: str) -> int | None:
        for pattern in _CONTEXT_LIMITS:
            found = pattern.search(message)
            if found:
                return int(found.group(1))
        return None

    def context_error(self, window: int, requested: int) -> tuple[str, str]:
        return (
            f"request ({requested} tokens) exceeds the available context size ({window} "
            "tokens), try increasing it",
            "exceed_context_size_error",
        )

    def error_body(self, status: int, message: str, kind: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "type": kind}}

    def reasoning_style(self, model: str) -> str:
        return "gemma-channel" if "gemma" in model.lower() else "reasoning_content"

    def structured_output(
        self, schema: Mapping[str, Any], *, name: str = "answer"
    ) -> dict[str, Any]:
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": dict(schema), "strict": True},
            }
        }

    def requested_schema(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        fmt = body.get("response_format")
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema")
            schema = spec.get("schema") if isinstance(spec, Mapping) else None
            return schema if isinstance(schema, Mapping) else None
        return None


LLAMACPP = LlamaCpp()

__all__ = ["LLAMACPP", "LlamaCpp"]
