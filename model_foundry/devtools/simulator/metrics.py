"""The simulated slot's ``/metrics``, under the names the real servers use.

- vLLM (vllm-project/vllm, ``vllm/v1/metrics/loggers.py`` ``PrometheusStatLogger`` and
  ``docs/design/metrics.md``, V1 engine, 0.10 line): gauges ``vllm:num_requests_running`` and
  ``vllm:num_requests_waiting``; counters ``vllm:prompt_tokens_total``,
  ``vllm:generation_tokens_total``, ``vllm:request_success_total{finished_reason}``;
  histograms ``vllm:time_to_first_token_seconds`` and ``vllm:e2e_request_latency_seconds``
  with vLLM's own bucket bounds. Every series carries ``model_name`` and ``engine``.
- llama.cpp (ggml-org/llama.cpp, ``tools/server/README.md``, "GET /metrics"): counters
  ``llamacpp:prompt_tokens_total``, ``llamacpp:prompt_seconds_total``,
  ``llamacpp:tokens_predicted_total``, ``llamacpp:tokens_predicted_seconds_total``,
  ``llamacpp:n_decode_total``; gauges ``llamacpp:prompt_tokens_seconds``,
  ``llamacpp:predicted_tokens_seconds``, ``llamacpp:requests_processing``,
  ``llamacpp:requests_deferred``. No labels, like the real server.

Only the names, types and labels are the servers'; the values are the simulator's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from model_foundry.lib.slots.config import Slot

# vLLM's bucket bounds for these two histograms (loggers.py, same version as above).
VLLM_TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
VLLM_E2E_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
    240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip


# vLLM's FinishReason values (vllm/v1/engine/__init__.py, 0.10 line; later releases add
# "error" and "repetition"), the finished_reason labels of request_success.
FINISH_REASONS = ("stop", "length", "abort")


@dataclass(frozen=True)
class Finished:
    """One request the simulated server finished: what it cost and how long it took."""

    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    ttft_s: float
    e2e_s: float
    prompt_s: float
    gen_s: float


class SlotMetrics:
    """A registry per simulated slot; :meth:`render` is the ``/metrics`` body."""

    def __init__(self, slot: Slot, running: Callable[[], int], waiting: Callable[[], int]) -> None:
        self.runtime = slot.runtime
        self.registry = CollectorRegistry()
        if slot.runtime == "vllm":
            self._vllm(slot, running, waiting)
        else:
            self._llamacpp(running, waiting)

    def _vllm(self, slot: Slot, running: Callable[[], int], waiting: Callable[[], int]) -> None:
        names = ["model_name", "engine"]
        values = [slot.model, "0"]
        reg = self.registry
        Gauge(
            "vllm:num_requests_running", "Number of requests in model execution batches.",
            names, registry=reg,
        ).labels(*values).set_function(running)  # fmt: skip
        Gauge(
            "vllm:num_requests_waiting", "Number of requests waiting to be processed.",
            names, registry=reg,
        ).labels(*values).set_function(waiting)  # fmt: skip
        self.prompt = Counter(
            "vllm:prompt_tokens", "Number of prefill tokens processed.", names, registry=reg
        ).labels(*values)
        self.generation = Counter(
            "vllm:generation_tokens", "Number of generation tokens processed.", names, registry=reg
        ).labels(*values)
        self._success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            [*names, "finished_reason"],
            registry=reg,
        )
        self._values = values
        # vLLM creates a series per finish reason at start, so they exist before any request.
        for reason in FINISH_REASONS:
            self._success.labels(*values, reason)
        self.ttft = Histogram(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            names,
            buckets=VLLM_TTFT_BUCKETS,
            registry=reg,
        ).labels(*values)
        self.e2e = Histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            names,
            buckets=VLLM_E2E_BUCKETS,
            registry=reg,
        ).labels(*values)

    def _llamacpp(self, running: Callable[[], int], waiting: Callable[[], int]) -> None:
        reg = self.registry
        self.prompt = Counter(
            "llamacpp:prompt_tokens", "Number of prompt tokens processed.", registry=reg
        )
        self.prompt_seconds = Counter(
            "llamacpp:prompt_seconds", "Prompt process time in seconds.", registry=reg
        )
        self.generation = Counter(
            "llamacpp:tokens_predicted", "Number of generation tokens processed.", registry=reg
        )
        self.gen_seconds = Counter(
            "llamacpp:tokens_predicted_seconds", "Predict process time in seconds.", registry=reg
        )
        self.decodes = Counter(
            "llamacpp:n_decode", "Total Number of llama_decode() calls.", registry=reg
        )
        self.prompt_tps = Gauge(
            "llamacpp:prompt_tokens_seconds", "Average prompt throughput in tokens/s.", registry=reg
        )
        self.gen_tps = Gauge(
            "llamacpp:predicted_tokens_seconds",
            "Average generation throughput in tokens/s.",
            registry=reg,
        )
        Gauge(
            "llamacpp:requests_processing", "Number of requests processing.", registry=reg
        ).set_function(running)
        Gauge(
            "llamacpp:requests_deferred", "Number of requests deferred.", registry=reg
        ).set_function(waiting)
        self._prompt_tokens = 0
        self._prompt_s = 0.0
        self._gen_tokens = 0
        self._gen_s = 0.0

    def finished(self, f: Finished) -> None:
        self.prompt.inc(f.prompt_tokens)
        self.generation.inc(f.completion_tokens)
        if self.runtime == "vllm":
            self._success.labels(*self._values, f.finish_reason or "stop").inc()
            self.ttft.observe(f.ttft_s)
            self.e2e.observe(f.e2e_s)
            return
        self.prompt_seconds.inc(f.prompt_s)
        self.gen_seconds.inc(f.gen_s)
        # One llama_decode() per generated token, as for a single sequence.
        self.decodes.inc(max(f.completion_tokens, 1))
        # The server's gauges are averages over its lifetime: tokens over processing time.
        self._prompt_tokens += f.prompt_tokens
        self._prompt_s += f.prompt_s
        self._gen_tokens += f.completion_tokens
        self._gen_s += f.gen_s
        if self._prompt_s > 0:
            self.prompt_tps.set(self._prompt_tokens / self._prompt_s)
        if self._gen_s > 0:
            self.gen_tps.set(self._gen_tokens / self._gen_s)

    def render(self) -> bytes:
        return generate_latest(self.registry)


__all__ = ["FINISH_REASONS", "VLLM_E2E_BUCKETS", "VLLM_TTFT_BUCKETS", "Finished", "SlotMetrics"]
