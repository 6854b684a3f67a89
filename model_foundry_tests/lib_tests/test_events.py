"""The event contract as pure logic: every kind of bad input gets a reason, none raises."""

from __future__ import annotations

import json

import pytest

from model_foundry.lib.events import (
    MAX_EVENT_BYTES,
    DeadLetter,
    InboxEvent,
    canonical_subject,
    subjects_for,
    validate_message,
)


def body(**overrides: object) -> bytes:
    event = {
        "event_id": "e-1",
        "correlation_id": "sess-1",
        "payload": {"messages": [{"role": "user", "content": "こんにちは"}]},
    }
    event.update(overrides)
    event = {k: v for k, v in event.items() if v is not DROP}
    return json.dumps(event, ensure_ascii=False).encode()


DROP = object()


def test_valid_chat_event_keeps_unknown_payload_keys() -> None:
    data = body(payload={"messages": [{"role": "user", "content": "hi"}], "extra": {"k": 1}})
    result = validate_message("llm.chat.persist", data, 7)
    assert isinstance(result, InboxEvent)
    assert result.stream_seq == 7
    assert json.loads(result.payload_json)["extra"] == {"k": 1}


def test_occurred_at_defaults_to_received_and_is_parsed_with_zone() -> None:
    plain = validate_message("llm.chat.persist", body(), 1)
    assert isinstance(plain, InboxEvent) and plain.occurred_at == plain.received_at
    zoned = validate_message("llm.chat.persist", body(occurred_at="2026-01-02T03:04:05Z"), 1)
    assert isinstance(zoned, InboxEvent)
    assert zoned.occurred_at.isoformat() == "2026-01-02T03:04:05+00:00"


@pytest.mark.parametrize(
    ("subject", "data", "reason"),
    [
        ("llm.chat.persist", b"{not json", "not valid JSON"),
        ("llm.chat.persist", b"\xff\xfe{}", "not valid UTF-8"),
        ("llm.chat.persist", b"[1, 2]", "must be a JSON object"),
        ("llm.chat.persist", body(event_id=DROP), "event_id is missing"),
        ("llm.chat.persist", body(event_id=12), "event_id is missing"),
        ("llm.chat.persist", body(correlation_id=DROP), "correlation_id is missing"),
        ("llm.chat.persist", body(subject="llm.tool_call"), "disagrees with the NATS subject"),
        ("llm.chat.persist", body(payload="text"), "payload must be a JSON object"),
        ("llm.chat.persist", body(payload={"messages": "hi"}), "payload.messages must be a list"),
        ("llm.chat.persist", body(occurred_at="yesterday"), "not an ISO 8601 time"),
        ("llm.tool_call", body(payload={"arguments": {}}), "payload.tool"),
        ("llm.flow.lineage", body(payload={"kind": "loop"}), "payload.kind"),
        ("llm.flow.lineage", body(payload={"kind": "edge", "source": "a"}), "payload.target"),
        ("obsidian.semantic_search", body(payload={"results": []}), "payload.query"),
        ("llm.unknown", body(), "not part of the event contract"),
        ("llm.chat.persist", b'{"event_id": "x", "a": "\\ud800"}', "not valid JSON"),
    ],
)
def test_contract_breaks_become_dead_letters_with_reason(
    subject: str, data: bytes, reason: str
) -> None:
    result = validate_message(subject, data, 3)
    assert isinstance(result, DeadLetter)
    assert reason in result.reason
    assert result.raw == data
    assert result.stream_seq == 3


def test_oversized_body_is_refused_before_parsing() -> None:
    big = body(payload={"messages": [{"role": "user", "content": "x" * (2 * MAX_EVENT_BYTES)}]})
    result = validate_message("llm.chat.persist", big, 1)
    assert isinstance(result, DeadLetter)
    assert "byte limit" in result.reason
    assert len(result.raw) == len(big)


def test_legacy_subjects_map_to_new_names() -> None:
    assert canonical_subject("knowledge.embedding") == "obsidian.semantic_search"
    assert canonical_subject("knowledge.chat.persist") == "llm.chat.persist"
    assert set(subjects_for("llm.tool_call")) == {"llm.tool_call", "knowledge.tool_call"}
    result = validate_message(
        "knowledge.embedding", body(payload={"query": "DuckDB"}, subject="knowledge.embedding"), 1
    )
    assert isinstance(result, InboxEvent)
    assert (result.subject, result.source_subject) == (
        "obsidian.semantic_search",
        "knowledge.embedding",
    )
