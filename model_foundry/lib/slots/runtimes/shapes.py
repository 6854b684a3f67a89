"""What every runtime describes the same way: its extra endpoints and its metric names."""

from __future__ import annotations

from dataclasses import dataclass

try:  # openai >= 3 ships on httpx2; older releases on httpx.
    import httpx2 as httpx
except ImportError:  # pragma: no cover - depends on the installed SDK
    import httpx  # type: ignore[no-redef]

HttpClient = httpx.Client


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


def server_root(base_url: str) -> str:
    """``http://host:port`` for ``http://host:port/v1``: /props and /tokenize sit at the root."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


__all__ = ["Endpoints", "HttpClient", "MetricNames", "httpx", "server_root"]
