"""The simulated slot's ``/metrics``, under the names the real servers use.

- vLLM (vllm-project/vllm, ``vllm/v1/metrics/loggers.py`` ``PrometheusStatLogger`` and
  ``docs/design/metrics.md``, V1 engine, 0.10 line): gauges ``vllm:num_requests_running`` and
  ``vllm:num_requests_waiting``; counters ``vllm:prompt_tokens_total``,
  ``vllm:generation_tokens_total``, ``vllm:request_success_total{finished_reason}``;
  histograms ``vllm:time_to_first_token_seconds`` and ``vllm:e2e_request_latency_seconds``
  with vLLM's own bucket bounds. Every series carries ``model_name`` and ``engine``.
- llama.cpp (ggml-org/llama.cpp, ``tools/server/README.md``, "GET /metrics"): counters
  ``llamacpp:prompt_tokens_total`` (computed tokens, cached ones excluded),
  ``llamacpp:prompt_tokens_cached_total`` (``server-task.cpp`` ``to_metrics``, as vendored in
  llama-cpp-python 0.3.36),
  ``llamacpp:prompt_seconds_total``,
  ``llamacpp:tokens_predicted_total``, ``llamacpp:tokens_predicted_seconds_total``,
  ``llamacpp:n_decode_total``; gauges ``llamacpp:prompt_tokens_seconds``,
  ``llamacpp:predicted_tokens_seconds``, ``llamacpp:requests_processing``,
  ``llamacpp:requests_deferred``. No labels, like the real server.

The names and labels come from the slot's runtime (``MetricNames`` in
``lib/slots/runtimes/``); a series the runtime does not name is not exported. Only the names,
types and labels are the servers'; the values are the simulator's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.runtimes import MetricNames

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

    prompt_tokens: int  # computed: those the prompt cache did not hold
    completion_tokens: int
    finish_reason: str
    ttft_s: float
    e2e_s: float
    prompt_s: float
    gen_s: float
    cached_tokens: int = 0


def _label_values(slot: Slot, names: tuple[str, ...]) -> list[str]:
    known = {"model_name": slot.model, "engine": "0"}
    return [known.get(n, "") for n in names]


class SlotMetrics:
    """A registry per simulated slot; :meth:`render` is the ``/metrics`` body."""

    def __init__(self, slot: Slot, running: Callable[[], int], waiting: Callable[[], int]) -> None:
        self.names = names = slot.server.metrics
        self.registry = CollectorRegistry()
        self._labels = list(names.labels)
        self._values = _label_values(slot, names.labels)
        self._gauge(names.running, "Number of requests being processed.").set_function(running)
        self._gauge(names.waiting, "Number of requests waiting to be processed.").set_function(
            waiting
        )
        self.prompt = self._counter(names.prompt_tokens, "Number of prompt tokens processed.")
        self.prompt_cached = self._counter(
            names.prompt_cached_tokens, "Number of prompt tokens reused from the cache."
        )
        self.generation = self._counter(
            names.generation_tokens, "Number of generation tokens processed."
        )
        self._success = None
        if names.request_success:
            self._success = Counter(
                names.request_success,
                "Count of successfully processed requests.",
                [*self._labels, "finished_reason"],
                registry=self.registry,
            )
            # vLLM creates a series per finish reason at start, so they exist before any request.
            for reason in FINISH_REASONS:
                self._success.labels(*self._values, reason)
        self.ttft = self._histogram(
            names.ttft_seconds, "Histogram of time to first token in seconds.", VLLM_TTFT_BUCKETS
        )
        self.e2e = self._histogram(
            names.e2e_seconds, "Histogram of e2e request latency in seconds.", VLLM_E2E_BUCKETS
        )
        self.prompt_seconds = self._counter(names.prompt_seconds, "Prompt process time in seconds.")
        self.gen_seconds = self._counter(
            names.generation_seconds, "Predict process time in seconds."
        )
        self.decodes = self._counter(names.decodes, "Total Number of llama_decode() calls.")
        self.prompt_tps = self._gauge(names.prompt_tps, "Average prompt throughput in tokens/s.")
        self.gen_tps = self._gauge(
            names.generation_tps, "Average generation throughput in tokens/s."
        )
        self._prompt_tokens = 0
        self._prompt_s = 0.0
        self._gen_tokens = 0
        self._gen_s = 0.0

    def _series(self, metric: Any) -> Any:
        return metric.labels(*self._values) if self._labels else metric

    def _counter(self, name: str | None, doc: str) -> Any:
        if name is None:
            return None
        return self._series(Counter(name, doc, self._labels, registry=self.registry))

    def _gauge(self, name: str | None, doc: str) -> Any:
        if name is None:
            return None
        return self._series(Gauge(name, doc, self._labels, registry=self.registry))

    def _histogram(self, name: str | None, doc: str, buckets: tuple[float, ...]) -> Any:
        if name is None:
            return None
        metric = Histogram(name, doc, self._labels, buckets=buckets, registry=self.registry)
        return self._series(metric)

    def finished(self, f: Finished) -> None:
        self.prompt.inc(f.prompt_tokens)
        if self.prompt_cached is not None:
            self.prompt_cached.inc(f.cached_tokens)
        self.generation.inc(f.completion_tokens)
        if self._success is not None:
            self._success.labels(*self._values, f.finish_reason or "stop").inc()
        for histogram, value in ((self.ttft, f.ttft_s), (self.e2e, f.e2e_s)):
            if histogram is not None:
                histogram.observe(value)
        for counter, amount in ((self.prompt_seconds, f.prompt_s), (self.gen_seconds, f.gen_s)):
            if counter is not None:
                counter.inc(amount)
        if self.decodes is not None:
            # One llama_decode() per generated token, as for a single sequence.
            self.decodes.inc(max(f.completion_tokens, 1))
        # The server's gauges are averages over its lifetime: tokens over processing time.
        self._prompt_tokens += f.prompt_tokens
        self._prompt_s += f.prompt_s
        self._gen_tokens += f.completion_tokens
        self._gen_s += f.gen_s
        if self.prompt_tps is not None and self._prompt_s > 0:
            self.prompt_tps.set(self._prompt_tokens / self._prompt_s)
        if self.gen_tps is not None and self._gen_s > 0:
            self.gen_tps.set(self._gen_tokens / self._gen_s)

    def render(self) -> bytes:
        return generate_latest(self.registry)


__all__ = [
    "FINISH_REASONS",
    "VLLM_E2E_BUCKETS",
    "VLLM_TTFT_BUCKETS",
    "Finished",
    "MetricNames",
    "SlotMetrics",
]
