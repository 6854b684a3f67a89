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


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        # Bad bytes inside a string of otherwise well-formed JSON, where orjson fails first.
        (b'{"event_id": "\xff", "correlation_id": "s"}', "not valid UTF-8 (invalid start byte"),
        # A UTF-8-encoded lone surrogate (CESU): Python and orjson both refuse it.
        (b'{"event_id": "\xed\xa0\x80", "correlation_id": "s"}', "not valid UTF-8"),
        (b'{"event_id": "\xe3\x81", "correlation_id": "s"}', "not valid UTF-8"),
    ],
)
def test_a_body_that_is_not_utf8_says_so_and_where(data: bytes, reason: str) -> None:
    result = validate_message("llm.chat.persist", data, 1)
    assert isinstance(result, DeadLetter)
    assert result.reason.startswith(f"body is {reason}"), result.reason
    assert "at byte 14)" in result.reason


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        # A message that is not an object is named before an earlier message's bad role.
        ([{"role": 3}, "text"], "payload.messages[1] must be an object"),
        ([{"role": "user", "content": 5}, {"role": 3}], "payload.messages[0].content must be"),
        ([{"role": "user"}, {"role": 3}, {"content": 1}], "payload.messages[1].role must be"),
        ([{"role": "user", "content": None}, {"role": "a", "content": [1]}], None),
    ],
)
def test_chat_messages_are_checked_in_order(messages: list[object], reason: str | None) -> None:
    result = validate_message("llm.chat.persist", body(payload={"messages": messages}), 1)
    if reason is None:
        assert isinstance(result, InboxEvent)
    else:
        assert isinstance(result, DeadLetter) and result.reason.startswith(reason), result


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
