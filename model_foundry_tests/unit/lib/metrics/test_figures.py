"""The exporter's DuckDB figures and metric families, from rows the pipeline's own writers add."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from model_foundry.lib import storage
from model_foundry.lib.events import DeadLetter, InboxEvent, reason_class, validate_message
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.llm import CompletionStore, Planned, Request
from model_foundry.lib.metrics.collector import FoundryCollector
from model_foundry.lib.metrics.figures import (
    TTFT_BUCKETS,
    PromptCacheFigures,
    read_figures,
    reason_class_sql,
)
from model_foundry.lib.metrics.refresher import Refresher
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body

NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)

# Bodies that break the contract in each way validate_message knows, with their class.
BAD_BODIES: list[tuple[str, bytes, str]] = [
    ("llm.chat.persist", b"\xff\xfe", "not_utf8"),
    ("llm.chat.persist", b"{not json", "not_json"),
    ("llm.chat.persist", b"[1]", "not_object"),
    ("llm.chat.persist", b'{"correlation_id": "s", "payload": {}}', "bad_id"),
    ("llm.chat.persist", b'{"event_id": "e", "payload": {}}', "bad_id"),
    (
        "llm.chat.persist",
        b'{"event_id": "e", "correlation_id": "s", "subject": "llm.tool_call", "payload": {}}',
        "subject_mismatch",
    ),
    (
        "llm.chat.persist",
        b'{"event_id": "e", "correlation_id": "s", "occurred_at": "soon", "payload": {}}',
        "bad_time",
    ),
    ("llm.chat.persist", b'{"event_id": "e", "correlation_id": "s", "payload": 3}', "bad_payload"),
    ("llm.tool_call", b'{"event_id": "e", "correlation_id": "s", "payload": {}}', "bad_payload"),
    ("llm.unknown", b"{}", "unknown_subject"),
    ("llm.chat.persist", b"x" * (1024 * 1024 + 1), "too_large"),
]


def _event(event_id: str, subject: str, session: str, when: datetime) -> InboxEvent:
    payload = (
        {"messages": [{"role": "user", "content": "hi"}]}
        if subject == "llm.chat.persist"
        else {"tool": "grep", "arguments": {}}
    )
    body = {
        "event_id": event_id,
        "correlation_id": session,
        "occurred_at": when.isoformat(),
        "payload": payload,
    }
    checked = validate_message(subject, json.dumps(body).encode(), 1 + len(event_id), NOW)
    assert isinstance(checked, InboxEvent)
    return checked


def _dead_letters() -> list[DeadLetter]:
    dead = []
    for seq, (subject, body, _) in enumerate(BAD_BODIES, start=100):
        checked = validate_message(subject, body, seq, NOW)
        assert isinstance(checked, DeadLetter)
        dead.append(checked)
    return dead


def _attempt(
    slot: str,
    status: str,
    ttft: float | None,
    latency: float,
    tokens: int,
    cached: int | None = None,
) -> Attempt:
    return Attempt(
        key=f"k-{slot}-{ttft}-{latency}",
        task="t",
        role="r",
        slot=slot,
        model=f"{slot}-model",
        runtime="vllm",
        status=status,  # type: ignore[arg-type]
        prompt_tokens=10,
        completion_tokens=tokens,
        latency_s=latency,
        ttft_s=ttft,
        cached_prompt_tokens=cached,
    )


@pytest.fixture
def filled_db(db_path: Path) -> Path:
    events = [
        _event("a1", "llm.chat.persist", "s1", NOW - timedelta(minutes=5)),
        _event("a2", "llm.chat.persist", "s2", NOW - timedelta(minutes=1)),
        _event("b1", "llm.tool_call", "s1", NOW - timedelta(minutes=3)),
    ]
    with storage.connect(db_path) as con:
        write_batch(con, "PIPELINE_EVENTS", events, _dead_letters())
    store = CompletionStore(db_path)
    for attempt in (
        _attempt("naughty", "ok", 0.03, 0.8, 40),
        _attempt("naughty", "ok", 0.4, 2.0, 60),
        _attempt("naughty", "error", None, 5.0, 0),
        # The one server that said what its prompt cache held (as llama.cpp does).
        _attempt("kindergarten", "ok", None, 1.2, 7, cached=6),
    ):
        store.record(
            attempt,
            Planned(
                Request("t", "r", Body(prompt="p")), attempt.key, attempt.model, {}, attempt.slot
            ),
        )
    with storage.connect(db_path) as con:
        con.execute(
            "INSERT INTO dataset_samples (dataset, version, request_key, prompt_id, source, "
            "role, sample_index, messages, is_empty, is_truncated) VALUES "
            "('ft', 'v1', 'k1', 'p', 'file', 'worker', 0, '[]', false, false), "
            "('ft', 'v1', 'k2', 'p', 'file', 'worker', 1, '[]', false, false), "
            "('ft', 'v1', 'k3', 'p', 'file', 'summary', 0, '[]', false, false)"
        )
    return db_path


def test_every_contract_break_has_its_class_in_python_and_in_sql(db_path: Path) -> None:
    dead = _dead_letters()
    assert [reason_class(d.reason) for d in dead] == [c for _, _, c in BAD_BODIES]
    with storage.connect(db_path) as con:
        con.execute("CREATE TABLE reasons (i INTEGER, reason VARCHAR)")
        con.executemany(
            "INSERT INTO reasons VALUES (?, ?)", list(enumerate(d.reason for d in dead))
        )
        sql_classes = [
            c
            for (c,) in con.execute(
                f"SELECT {reason_class_sql()} FROM reasons ORDER BY i"
            ).fetchall()
        ]
    assert sql_classes == [c for _, _, c in BAD_BODIES]
    assert reason_class("something new went wrong") == "other"
    assert reason_class("duplicate event_id 'x' with a different body; ...") == (
        "conflicting_duplicate"
    )


def test_figures_match_the_rows(filled_db: Path) -> None:
    with storage.connect(filled_db, read_only=True) as con:
        f = read_figures(con)
    assert f.inbox_events == {"llm.chat.persist": 2, "llm.tool_call": 1}
    assert f.newest_event_at["llm.chat.persist"] == (NOW - timedelta(minutes=1)).timestamp()
    assert sum(f.dead_letters.values()) == len(BAD_BODIES)
    assert f.dead_letters[("llm.chat.persist", "bad_id")] == 2
    assert f.dead_letters[("llm.unknown", "unknown_subject")] == 1
    assert f.completions == {
        ("naughty", "naughty-model", "ok"): 2,
        ("naughty", "naughty-model", "error"): 1,
        ("kindergarten", "kindergarten-model", "ok"): 1,
    }
    assert f.generation_tokens == {"naughty": 100, "kindergarten": 7}
    assert f.prompt_tokens == {"naughty": 30, "kindergarten": 10}
    ttft = f.ttft["naughty"]
    assert ttft.count == 2 and ttft.total == pytest.approx(0.43)
    cumulative = dict(ttft.buckets)
    assert cumulative[0.025] == 0 and cumulative[0.05] == 1 and cumulative[0.25] == 1
    assert cumulative[0.5] == 2 and cumulative[TTFT_BUCKETS[-1]] == 2
    assert "kindergarten" not in f.ttft  # no TTFT measured there
    assert f.latency["kindergarten"].count == 1  # errors are not in the latency histogram
    assert f.latency["naughty"].count == 2
    assert f.dataset_samples == {("ft", "worker"): 2, ("ft", "summary"): 1}
    # Only attempts whose server reported its cache reuse: naughty's did not.
    assert f.prompt_cache == {("kindergarten", "t"): PromptCacheFigures(10, 6, 7)}


def test_empty_file_reads_as_no_figures(db_path: Path) -> None:
    with storage.connect(db_path) as con:
        con.execute("SELECT 1")
    with storage.connect(db_path, read_only=True) as con:
        f = read_figures(con)
    assert f.inbox_events == {} and f.completions == {} and f.dataset_samples == {}


def test_collector_serves_standard_names_that_prometheus_parses(filled_db: Path) -> None:
    def read() -> object:
        with storage.connect(filled_db, read_only=True) as con:
            return read_figures(con)

    refresher = Refresher("duckdb", read, interval_s=60)
    refresher.refresh_once()
    registry = CollectorRegistry()
    registry.register(FoundryCollector(refresher))  # type: ignore[arg-type]
    text = generate_latest(registry).decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["model_foundry_inbox_events"].type == "counter"
    assert families["model_foundry_completion_ttft_seconds"].type == "histogram"
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in families.values()
        for s in f.samples
    }
    assert samples[("model_foundry_inbox_events_total", (("subject", "llm.chat.persist"),))] == 2
    assert samples[
        ("model_foundry_completions_total",
         (("model", "naughty-model"), ("slot", "naughty"), ("status", "error")))
    ] == 1  # fmt: skip
    assert samples[("model_foundry_completion_ttft_seconds_count", (("slot", "naughty"),))] == 2
    assert (
        samples[
            ("model_foundry_completion_ttft_seconds_bucket", (("le", "+Inf"), ("slot", "naughty")))
        ]
        == 2
    )
    assert samples[("model_foundry_exporter_snapshot_age_seconds", (("source", "duckdb"),))] >= 0
    kg = (("slot", "kindergarten"), ("task", "t"))
    assert [
        samples[(f"model_foundry_prefill_{name}_tokens_total", kg)]
        for name in ("prompt", "cached", "completion")
    ] == [10, 6, 7]
    assert not any(
        n.startswith("model_foundry_prefill_") and ("slot", "naughty") in labels
        for n, labels in samples
    )
    age = samples[
        ("model_foundry_inbox_newest_event_age_seconds", (("subject", "llm.chat.persist"),))
    ]
    assert age >= (datetime.now(UTC) - NOW).total_seconds() - 61
