"""Slot runtimes: what differs between the kinds of model server a slot can be.

A slot file names its server's ``runtime``; everything that depends on it (where the context
window is stated, how tokens are counted, error bodies and wordings, reasoning fields, metric
names, how a JSON schema constrains the answer) asks the ``Runtime`` registered under that
name. The slot simulator asks the same objects, so it answers as the real servers do.

Adding a runtime: a module beside ``vllm.py`` with a class that satisfies ``Runtime``, and one
entry in ``RUNTIMES``. A slot file may then name it, and nothing else needs to change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.runtimes.llamacpp import LLAMACPP
from model_foundry.lib.slots.runtimes.shapes import (
    Endpoints,
    HttpClient,
    MetricNames,
    httpx,
    server_root,
)
from model_foundry.lib.slots.runtimes.vllm import VLLM


class Runtime(Protocol):
    """One kind of OpenAI-compatible model server, as the pipeline and the simulator see it."""

    name: str  # the slot file's ``runtime`` value
    label: str  # for people: "vLLM", "llama.cpp"
    context_source: str  # where a discovered window came from, for run metadata
    endpoints: Endpoints
    metrics: MetricNames
    # Message fields that carry reasoning, the server's own first.
    reasoning_fields: tuple[str, ...]
    sends_timings: bool  # a ``timings`` object with exact speeds in each answer
    # Whether each answer, as the server runs by default, says how many of its prompt tokens
    # came from the prompt cache (the simulator reports them where this is true).
    reports_cached_tokens: bool
    # Whether a JSON schema constrains only the answer after the model's reasoning (vLLM with
    # a reasoning parser), not the reasoning too (llama.cpp: a thinking model under a schema
    # can loop inside its reasoning and leave the answer empty).
    schema_after_reasoning: bool
    # The request field that runs a request in one of the server's fixed slots (its prompt
    # cache), or None when the server has no such slots (one shared cache).
    slot_pin: str | None
    # Whether a response with ``n`` choices reports usage once per choice (else once for all).
    usage_per_choice: bool
    health_body: Mapping[str, Any] | None  # ``/health``'s JSON when up; None: an empty 200

    # -- context window -------------------------------------------------------------------
    def context_url(self, base_url: str) -> str:
        """Where the window one request may use is stated, for a slot at ``base_url``."""
        ...

    def context_from(self, body: Any, model: str) -> int | None:
        """The window in that endpoint's JSON ``body``; None when it does not say."""
        ...

    def context_body(self, window: int, model: str) -> dict[str, Any]:
        """That endpoint's JSON for a server with ``window`` (the simulator serves it)."""
        ...

    # -- token counting -------------------------------------------------------------------
    def count_tokens(self, http: HttpClient, root: str, model: str, body: Body) -> int:
        """Prompt tokens by the server's own tokenizer; raises httpx/KeyError/ValueError."""
        ...

    def tokenize_body(self, tokens: list[int], window: int) -> dict[str, Any]:
        """The tokenize endpoint's answer for ``tokens`` (the simulator serves it)."""
        ...

    def cached_tokens(
        self, usage: Mapping[str, Any] | None, timings: Mapping[str, Any] | None
    ) -> int | None:
        """Prompt tokens the server took from its cache instead of computing, from a response's
        ``usage`` and ``timings`` (JSON objects, either None when absent); None when the
        response does not say, never 0 by guess."""
        ...

    # -- errors ---------------------------------------------------------------------------
    def context_limit_from_error(self, message: str) -> int | None:
        """The window a "prompt too long" error states; None for any other message."""
        ...

    def context_error(self, window: int, requested: int) -> tuple[str, str]:
        """(message, type) of the server's "prompt too long" error."""
        ...

    def error_body(self, status: int, message: str, kind: str) -> dict[str, Any]:
        """An error response body in the server's style."""
        ...

    # -- answers --------------------------------------------------------------------------
    def reasoning_style(self, model: str) -> str:
        """How ``model``'s reasoning arrives: a field name, or "gemma-channel" markers."""
        ...

    def structured_output(
        self, schema: Mapping[str, Any], *, name: str = "answer"
    ) -> dict[str, Any]:
        """Request arguments (SDK keywords, ``extra_body``) constraining the answer to
        ``schema``; merge them into a ``build_request`` result."""
        ...

    def requested_schema(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The schema a request's JSON ``body`` (as the server receives it) constrains its
        answer to, as ``structured_output`` spells it; None when unconstrained (the
        simulator reads it to answer as a constrained server would)."""
        ...


RUNTIMES: dict[str, Runtime] = {
    LLAMACPP.name: LLAMACPP,
    VLLM.name: VLLM,
}


class UnknownRuntimeError(LookupError):
    """A runtime name no module registered."""


def known_runtimes() -> str:
    return ", ".join(sorted(RUNTIMES))


def runtime_for(name: str) -> Runtime:
    """The registered runtime called ``name``."""
    try:
        return RUNTIMES[name]
    except KeyError:
        raise UnknownRuntimeError(f"unknown runtime {name!r} (known: {known_runtimes()})") from None


def context_limit_from_error(message: str) -> int | None:
    """The window any registered runtime's "prompt too long" wording states, or None."""
    if not isinstance(message, str):
        return None
    for runtime in RUNTIMES.values():
        limit = runtime.context_limit_from_error(message)
        if limit is not None:
            return limit if limit > 0 else None
    return None


__all__ = [
    "LLAMACPP",
    "RUNTIMES",
    "VLLM",
    "Endpoints",
    "HttpClient",
    "MetricNames",
    "Runtime",
    "UnknownRuntimeError",
    "context_limit_from_error",
    "httpx",
    "known_runtimes",
    "runtime_for",
    "server_root",
]
