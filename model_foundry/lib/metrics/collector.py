"""Prometheus metric families built from the refreshers' cached figures, at scrape time.

Names follow Prometheus' conventions: a ``model_foundry_`` prefix, base units (seconds),
``_total`` on counters. Counters are counts of rows in append-only tables, so they only grow.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from model_foundry.lib.metrics.figures import DuckDBFigures, HistogramFigures
from model_foundry.lib.metrics.refresher import Refresher


@dataclass(frozen=True)
class ConsumerFigures:
    """One subject's durable consumer as NATS reports it."""

    subject: str
    consumer: str
    pending: int
    ack_pending: int
    redelivered: int


@dataclass(frozen=True)
class SlotLoad:
    """A slot's requests in flight (from its limiter) against its ``parallel``."""

    slot: str
    runtime: str
    model: str
    parallel: int
    in_flight: int


def _histogram(name: str, doc: str, figures: dict[str, HistogramFigures]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc, labels=["slot"])
    for slot, h in sorted(figures.items()):
        buckets = [(repr(float(le)), n) for le, n in h.buckets] + [("+Inf", h.count)]
        family.add_metric([slot], buckets=buckets, sum_value=h.total)
    return family


def _by_slot(name: str, doc: str, per_slot: dict[str, int]) -> CounterMetricFamily:
    family = CounterMetricFamily(name, doc, labels=["slot"])
    for slot, n in sorted(per_slot.items()):
        family.add_metric([slot], n)
    return family


def duckdb_families(figures: DuckDBFigures, now: float) -> Iterator[Metric]:
    events = CounterMetricFamily(
        "model_foundry_inbox_events",
        "Events stored in pipeline_event_inbox, by subject.",
        labels=["subject"],
    )
    for subject, n in sorted(figures.inbox_events.items()):
        events.add_metric([subject], n)
    yield events

    newest_ts = GaugeMetricFamily(
        "model_foundry_inbox_newest_event_timestamp_seconds",
        "occurred_at of the newest stored event, by subject (Unix time).",
        labels=["subject"],
    )
    newest_age = GaugeMetricFamily(
        "model_foundry_inbox_newest_event_age_seconds",
        "Seconds since the newest stored event of each subject occurred.",
        labels=["subject"],
    )
    for subject, ts in sorted(figures.newest_event_at.items()):
        newest_ts.add_metric([subject], ts)
        newest_age.add_metric([subject], max(0.0, now - ts))
    yield newest_ts
    yield newest_age

    dead = CounterMetricFamily(
        "model_foundry_dead_letters",
        "Messages in pipeline_event_dead_letter, by subject and reason class.",
        labels=["subject", "reason_class"],
    )
    for (subject, reason_class), n in sorted(figures.dead_letters.items()):
        dead.add_metric([subject, reason_class], n)
    yield dead

    completions = CounterMetricFamily(
        "model_foundry_completions",
        "Completion attempts recorded in llm_completions, by slot, model and status.",
        labels=["slot", "model", "status"],
    )
    for (slot, model, status), n in sorted(figures.completions.items()):
        completions.add_metric([slot, model, status], n)
    yield completions

    for name, doc, per_slot in (
        ("model_foundry_slot_prompt_tokens", "Prompt tokens sent, by slot.", figures.prompt_tokens),
        (
            "model_foundry_slot_generation_tokens",
            "Completion tokens received, by slot.",
            figures.generation_tokens,
        ),
    ):
        yield _by_slot(name, doc, per_slot)

    yield from prompt_cache_families(figures)

    yield _histogram(
        "model_foundry_completion_ttft_seconds",
        "Time to first token of successful streamed completions, by slot.",
        figures.ttft,
    )
    yield _histogram(
        "model_foundry_completion_latency_seconds",
        "Whole-request latency of successful completions, by slot.",
        figures.latency,
    )

    samples = CounterMetricFamily(
        "model_foundry_dataset_samples",
        "Rows in dataset_samples, by dataset and role.",
        labels=["dataset", "role"],
    )
    for (dataset, role), n in sorted(figures.dataset_samples.items()):
        samples.add_metric([dataset, role], n)
    yield samples
    yield CounterMetricFamily(
        "model_foundry_session_summaries", "Rows in session_summaries.", value=figures.summaries
    )
    yield CounterMetricFamily(
        "model_foundry_summary_translations",
        "Rows in session_summary_translations.",
        value=figures.translations,
    )
    yield from session_families(figures)


def prompt_cache_families(figures: DuckDBFigures) -> Iterator[Metric]:
    """What the servers' prompt caches saved, by slot and task, over the attempts whose server
    said (``llm_completions.cached_prompt_tokens``; view ``slot_prefill``). Prefill tokens per
    generated token is (prompt - cached) / completion; the hit share cached / prompt."""
    fields = (
        (
            "model_foundry_prefill_prompt_tokens",
            "Prompt tokens of attempts whose server reported its prompt-cache reuse.",
            "prompt_tokens",
        ),
        (
            "model_foundry_prefill_cached_tokens",
            "Prompt tokens the servers reused from their prompt cache instead of computing.",
            "cached_tokens",
        ),
        (
            "model_foundry_prefill_completion_tokens",
            "Completion tokens of attempts whose server reported its prompt-cache reuse.",
            "completion_tokens",
        ),
    )
    for name, doc, attribute in fields:
        family = CounterMetricFamily(name, doc, labels=["slot", "task"])
        for (slot, task), f in sorted(figures.prompt_cache.items()):
            family.add_metric([slot, task], getattr(f, attribute))
        yield family


def session_families(figures: DuckDBFigures) -> Iterator[Metric]:
    """The sessions' own work by slot (session_routing) and their flow (session_flow)."""
    for name, doc, per_slot in (
        (
            "model_foundry_session_turns",
            "The sessions' own chat turns (llm.chat.persist events), by slot.",
            figures.session_turns,
        ),
        (
            "model_foundry_session_prompt_tokens",
            "Prompt tokens of the sessions' own chat turns, by slot.",
            figures.session_prompt_tokens,
        ),
        (
            "model_foundry_session_completion_tokens",
            "Completion tokens of the sessions' own chat turns, by slot.",
            figures.session_completion_tokens,
        ),
    ):
        yield _by_slot(name, doc, per_slot)
    events = CounterMetricFamily(
        "model_foundry_flow_events",
        "Lineage events stored in flow_nodes and flow_edges, by kind.",
        labels=["kind"],
    )
    for kind, n in sorted(figures.flow_events.items()):
        events.add_metric([kind], n)
    yield events
    yield GaugeMetricFamily(
        "model_foundry_flow_sessions", "Sessions in session_flow.", value=figures.flow_sessions
    )
    yield GaugeMetricFamily(
        "model_foundry_uncoordinated_sessions",
        "Sessions whose parallel branches never joined again (session_flow.uncoordinated).",
        value=figures.uncoordinated_sessions,
    )


def nats_families(consumers: dict[str, ConsumerFigures]) -> Iterator[Metric]:
    docs = {
        "pending": "Messages in the subject's durable consumer not yet delivered.",
        "ack_pending": "Messages delivered to a drain and not yet acknowledged.",
        "redelivered": "Messages delivered more than once and not yet acknowledged.",
    }
    for field, doc in docs.items():
        family = GaugeMetricFamily(
            f"model_foundry_nats_consumer_{field}_messages", doc, labels=["subject", "consumer"]
        )
        for subject, c in sorted(consumers.items()):
            family.add_metric([subject, c.consumer], getattr(c, field))
        yield family


def slot_families(loads: list[SlotLoad]) -> Iterator[Metric]:
    in_flight = GaugeMetricFamily(
        "model_foundry_slot_requests_in_flight",
        "Requests holding one of the slot's parallel places, across every process.",
        labels=["slot", "runtime", "model"],
    )
    parallel = GaugeMetricFamily(
        "model_foundry_slot_parallel",
        "The slot's parallel setting in the slot file.",
        labels=["slot", "runtime", "model"],
    )
    for load in sorted(loads, key=lambda s: s.slot):
        labels = [load.slot, load.runtime, load.model]
        in_flight.add_metric(labels, load.in_flight)
        parallel.add_metric(labels, load.parallel)
    yield in_flight
    yield parallel


class FoundryCollector(Collector):
    """Serves the newest figures of each refresher, plus how old they are."""

    def __init__(
        self,
        duckdb: Refresher[DuckDBFigures],
        nats: Refresher[dict[str, ConsumerFigures]] | None = None,
        slots: Refresher[list[SlotLoad]] | None = None,
    ) -> None:
        self.duckdb = duckdb
        self.nats = nats
        self.slots = slots

    def _refreshers(self) -> list[Refresher]:
        return [r for r in (self.duckdb, self.nats, self.slots) if r is not None]

    def collect(self) -> Iterator[Metric]:
        now = time.time()
        if (reading := self.duckdb.latest) is not None:
            yield from duckdb_families(reading.value, now)
        if self.nats is not None and (nats := self.nats.latest) is not None:
            yield from nats_families(nats.value)
        if self.slots is not None and (slots := self.slots.latest) is not None:
            yield from slot_families(slots.value)
        yield from self._freshness(now)

    def _freshness(self, now: float) -> Iterator[Metric]:
        age = GaugeMetricFamily(
            "model_foundry_exporter_snapshot_age_seconds",
            "Seconds since the exporter last read each source successfully.",
            labels=["source"],
        )
        taken = GaugeMetricFamily(
            "model_foundry_exporter_snapshot_timestamp_seconds",
            "When the exporter last read each source successfully (Unix time).",
            labels=["source"],
        )
        errors = CounterMetricFamily(
            "model_foundry_exporter_refresh_errors",
            "Reads of a source that failed (busy: a writer held the DuckDB file), by reason.",
            labels=["source", "reason"],
        )
        for refresher in self._refreshers():
            if (reading := refresher.latest) is not None:
                age.add_metric([refresher.source], max(0.0, now - reading.taken_at))
                taken.add_metric([refresher.source], reading.taken_at)
            for reason, n in sorted(refresher.errors.items()):
                errors.add_metric([refresher.source, reason], n)
        yield age
        yield taken
        yield errors


__all__ = [
    "ConsumerFigures",
    "FoundryCollector",
    "SlotLoad",
    "duckdb_families",
    "nats_families",
    "session_families",
    "slot_families",
]
