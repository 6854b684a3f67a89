"""What every runtime describes the same way: its extra endpoints, its metric names, and the
small readers of response fields the OpenAI types do not pin down."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

try:  # openai >= 3 ships on httpx2; older releases on httpx.
    import httpx2 as httpx
except ImportError:  # pragma: no cover - depends on the installed SDK
    import httpx  # type: ignore[no-redef]

HttpClient = httpx.Client

# How long an idle connection is kept for the next request. llama-server and vLLM's uvicorn
# close idle connections after 5 s, and httpx's default is the same 5 s: a request sent on a
# connection the server is closing at that moment fails ("server disconnected"). Well below
# 5 s, the client always lets go first.
KEEPALIVE_EXPIRY_S = 2.0


@dataclass(frozen=True)
class Endpoints:
    """Paths under the server root (``http://host:port``) beside the OpenAI routes."""

    # Where the context window one request may use is stated.
    context: str
    tokenize: str = "/tokenize"
    # Renders chat messages with the model's template (llama.cpp), for counting.
    apply_template: str | None = None
    # Per-slot state of a server with fixed parallel slots (llama.cpp ``/slots``).
    slots: str | None = None


@dataclass(frozen=True)
class MetricNames:
    """The Prometheus series a server exports on ``/metrics`` (counters without ``_total``).

    The first four every runtime has; the optional ones only some do.
    """

    running: str
    waiting: str
    prompt_tokens: str
    generation_tokens: str
    # Label names carried by every series ("model_name", "engine" for vLLM; none for llama.cpp).
    labels: tuple[str, ...] = ()
    request_success: str | None = None
    ttft_seconds: str | None = None
    e2e_seconds: str | None = None
    prompt_seconds: str | None = None
    generation_seconds: str | None = None
    decodes: str | None = None
    prompt_tps: str | None = None
    generation_tps: str | None = None
    # Prompt tokens reused from the prompt cache (then ``prompt_tokens`` counts only the
    # computed ones, as llama.cpp's does).
    prompt_cached_tokens: str | None = None


def server_root(base_url: str) -> str:
    """``http://host:port`` for ``http://host:port/v1``: /props and /tokenize sit at the root."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def token_count(value: Any) -> int | None:
    """``value`` when it is a count of tokens (an int, not a bool, not negative); else None:
    a field a server filled oddly is not a measurement, and is never read as 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def usage_cached_tokens(usage: Mapping[str, Any] | None) -> int | None:
    """OpenAI's ``usage.prompt_tokens_details.cached_tokens``; None when it is not there."""
    details = usage.get("prompt_tokens_details") if isinstance(usage, Mapping) else None
    return token_count(details.get("cached_tokens")) if isinstance(details, Mapping) else None


__all__ = [
    "Endpoints",
    "HttpClient",
    "MetricNames",
    "httpx",
    "server_root",
    "token_count",
    "usage_cached_tokens",
]
