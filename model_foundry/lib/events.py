"""The event contract: subjects, legacy names and validation of one NATS message body.

Pure logic, no I/O: the inbox asset, the CLI, the benchmarks and the hypothesis tests all
call :func:`validate_message` and get back either an :class:`InboxEvent` or a
:class:`DeadLetter` with a readable reason. It never raises on bad input.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

CHAT_PERSIST = "llm.chat.persist"
TOOL_CALL = "llm.tool_call"
FLOW_LINEAGE = "llm.flow.lineage"
SEMANTIC_SEARCH = "obsidian.semantic_search"

SUBJECTS: tuple[str, ...] = (CHAT_PERSIST, TOOL_CALL, FLOW_LINEAGE, SEMANTIC_SEARCH)

# Names used before the rename; stored under the new name with the original kept.
LEGACY_SUBJECTS: dict[str, str] = {
    "knowledge.chat.persist": CHAT_PERSIST,
    "knowledge.embedding": SEMANTIC_SEARCH,
    "knowledge.flow.lineage": FLOW_LINEAGE,
    "knowledge.tool_call": TOOL_CALL,
}

ALL_SUBJECTS: tuple[str, ...] = SUBJECTS + tuple(LEGACY_SUBJECTS)

# A body past this size is refused before parsing: a multi-megabyte event is a publisher
# bug, and keeping it would bloat every downstream prompt. The raw bytes still go to the
# dead-letter table so nothing is lost.
MAX_EVENT_BYTES = 1024 * 1024
MAX_ID_LENGTH = 256


def canonical_subject(subject: str) -> str | None:
    """The contract name for a NATS subject, or ``None`` when it is outside the contract."""
    if subject in SUBJECTS:
        return subject
    return LEGACY_SUBJECTS.get(subject)


def subjects_for(canonical: str) -> list[str]:
    """Every NATS subject that lands in the partition ``canonical`` (its own and legacy)."""
    return [canonical, *(old for old, new in LEGACY_SUBJECTS.items() if new == canonical)]


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which makes
# building one InboxEvent per message dearer for the drain's event loop than a plain slots
# class (figures in docs/benchmarks.md). Nothing changes an event after validate_message
# made it.
@dataclass(slots=True)
class InboxEvent:
    event_id: str
    subject: str
    source_subject: str
    correlation_id: str
    occurred_at: datetime
    received_at: datetime
    stream_seq: int
    payload_json: str
    body_sha256: str
    raw: bytes = field(repr=False, default=b"")
    # When JetStream stored the message: the same on every redelivery, unlike received_at.
    published_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class DeadLetter:
    subject: str
    source_subject: str
    stream_seq: int
    received_at: datetime
    reason: str
    raw: bytes
    event_id: str | None = None
    published_at: datetime | None = None


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        # Times at the calendar's edges (year 1 east of UTC, year 9999 west of it) overflow
        # when moved to UTC; they are unparseable times, not a reason to crash the drain.
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _brief(value: Any, limit: int = 80) -> str:
    """A bad field as a reason shows it: short, and never ``repr`` of a nested value.

    ``repr`` of an array nested ~1000 deep (orjson parses up to 1024) raises RecursionError,
    and a megabyte string would make a megabyte reason.
    """
    if isinstance(value, str):
        return repr(value[:limit]) + ("..." if len(value) > limit else "")
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return f"a JSON {'object' if isinstance(value, dict) else 'array'}"


def _require_list_of_objects(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    if not isinstance(value, list):
        return f"payload.{key} must be a list"
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            return f"payload.{key}[{i}] must be an object"
    return None


def _check_payload(subject: str, payload: dict[str, Any]) -> str | None:
    """What a downstream step needs of each subject's payload; everything else is kept as is."""
    if subject == CHAT_PERSIST:
        messages = payload.get("messages")
        if not isinstance(messages, list):
            return "payload.messages must be a list"
        # One pass over the messages (the drain's hot path), with the reasons a check of the
        # list and then of each message gives: a message that is not an object wins over an
        # earlier message's bad role or content.
        first_problem = None
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                # The list check's own reason (it finds this message, the first non-object).
                return _require_list_of_objects(payload, "messages")
            if first_problem is not None:
                continue
            content = message.get("content")
            if not isinstance(message.get("role"), str):
                first_problem = f"payload.messages[{i}].role must be a string"
            elif not isinstance(content, str | list) and content is not None:
                first_problem = f"payload.messages[{i}].content must be a string, a list or null"
        return first_problem
    elif subject == TOOL_CALL:
        if not isinstance(payload.get("tool"), str) or not payload["tool"]:
            return "payload.tool must be a non-empty string"
        if "arguments" not in payload:
            return "payload.arguments is required"
        duration = payload.get("duration_ms")
        if duration is not None and (
            isinstance(duration, bool) or not isinstance(duration, int | float)
        ):
            return "payload.duration_ms must be a number"
    elif subject == FLOW_LINEAGE:
        kind = payload.get("kind")
        if kind == "node":
            if not isinstance(payload.get("node_id"), str) or not payload["node_id"]:
                return "payload.node_id must be a non-empty string for kind 'node'"
        elif kind == "edge":
            for key in ("source", "target"):
                if not isinstance(payload.get(key), str) or not payload[key]:
                    return f"payload.{key} must be a non-empty string for kind 'edge'"
        else:
            return "payload.kind must be 'node' or 'edge'"
    elif subject == SEMANTIC_SEARCH:
        if not isinstance(payload.get("query"), str):
            return "payload.query must be a string"
        if "results" in payload and payload["results"] is not None:
            problem = _require_list_of_objects(payload, "results")
            if problem:
                return problem
    return None


def _reject(
    reason: str,
    subject: str,
    source_subject: str,
    seq: int,
    received_at: datetime,
    published_at: datetime | None,
    raw: bytes,
    event_id: str | None = None,
) -> DeadLetter:
    return DeadLetter(
        subject, source_subject, seq, received_at, reason, raw, event_id, published_at
    )


class _Invalid(Exception):
    """A contract break found while reading a body: its reason, and its event id if known."""

    def __init__(self, reason: str, event_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.event_id = event_id


def _parse_body(data: bytes) -> dict[str, Any]:
    if len(data) > MAX_EVENT_BYTES:
        raise _Invalid(f"body is {len(data)} bytes, over the {MAX_EVENT_BYTES} byte limit")
    try:
        # orjson checks that the whole body is UTF-8 (lone surrogates included) before it
        # parses, and also refuses integers past 64 bits and nesting deeper than 1024, each
        # with a message that names the position; all are contract breaks here.
        body = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        # Only a body that failed is decoded by Python, so that a non-UTF-8 body keeps its
        # own reason: decoding every body first would cost the drain a second pass over each.
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            reason = f"body is not valid UTF-8 ({bad.reason} at byte {bad.start})"
            raise _Invalid(reason) from None
        raise _Invalid(f"body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise _Invalid(f"body must be a JSON object, got {type(body).__name__}")
    return body


def _ids(body: dict[str, Any]) -> tuple[str, str]:
    event_id = body.get("event_id")
    if not isinstance(event_id, str) or not event_id.strip():
        raise _Invalid("event_id is missing or not a non-empty string")
    if len(event_id) > MAX_ID_LENGTH:
        raise _Invalid(f"event_id is longer than {MAX_ID_LENGTH} characters")
    correlation_id = body.get("correlation_id")
    if not isinstance(correlation_id, str) or not correlation_id.strip():
        raise _Invalid("correlation_id is missing or not a non-empty string", event_id)
    if len(correlation_id) > MAX_ID_LENGTH:
        raise _Invalid(f"correlation_id is longer than {MAX_ID_LENGTH} characters", event_id)
    return event_id, correlation_id


def _envelope(
    body: dict[str, Any], subject: str, source_subject: str, event_id: str
) -> tuple[datetime | None, str]:
    """The declared subject agrees, ``occurred_at`` parses (``None`` when absent) and the
    payload meets its subject's rules; returns the time and the payload as JSON text."""
    declared = body.get("subject")
    if declared is not None and (
        not isinstance(declared, str) or canonical_subject(declared) != subject
    ):
        raise _Invalid(
            f"subject field {_brief(declared)} disagrees with the NATS subject {source_subject!r}",
            event_id,
        )
    occurred_at = None
    occurred_raw = body.get("occurred_at")
    if occurred_raw is not None:
        occurred_at = _parse_time(occurred_raw)
        if occurred_at is None:
            raise _Invalid(f"occurred_at {_brief(occurred_raw)} is not an ISO 8601 time", event_id)
    payload = body.get("payload")
    if not isinstance(payload, dict):
        raise _Invalid(f"payload must be a JSON object, got {type(payload).__name__}", event_id)
    problem = _check_payload(subject, payload)
    if problem:
        raise _Invalid(problem, event_id)
    try:
        return occurred_at, orjson.dumps(payload).decode("utf-8")
    except (orjson.JSONEncodeError, UnicodeDecodeError) as exc:
        raise _Invalid(f"payload cannot be stored as JSON text: {exc}", event_id) from None


def validate_message(
    source_subject: str,
    data: bytes,
    stream_seq: int,
    received_at: datetime | None = None,
    published_at: datetime | None = None,
) -> InboxEvent | DeadLetter:
    """Check one message against the contract; never raises on bad input.

    ``published_at`` is when JetStream stored the message; an event without ``occurred_at``
    gets it, so every redelivery of the message carries the same time."""
    received_at = received_at or datetime.now(UTC)
    subject = canonical_subject(source_subject)
    if subject is None:
        return _reject(
            f"subject {source_subject!r} is not part of the event contract",
            source_subject,
            source_subject,
            stream_seq,
            received_at,
            published_at,
            data,
        )
    try:
        body = _parse_body(data)
        event_id, correlation_id = _ids(body)
        occurred_at, payload_json = _envelope(body, subject, source_subject, event_id)
        if "\x00" in event_id or "\x00" in correlation_id:
            # NUL inside an id breaks C-string tooling downstream; payload text keeps it escaped.
            raise _Invalid("ids must not contain NUL characters", event_id)
    except _Invalid as bad:
        return _reject(
            bad.reason,
            subject,
            source_subject,
            stream_seq,
            received_at,
            published_at,
            data,
            event_id=bad.event_id,
        )
    return InboxEvent(
        event_id=event_id,
        subject=subject,
        source_subject=source_subject,
        correlation_id=correlation_id,
        occurred_at=occurred_at or published_at or received_at,
        received_at=received_at,
        stream_seq=stream_seq,
        payload_json=payload_json,
        body_sha256=hashlib.sha256(data).hexdigest(),
        raw=data,
        published_at=published_at,
    )


# Dead-letter reasons grouped for dashboards: (class, SQL LIKE patterns of the reasons above
# and of the store's conflicting duplicates). The first match wins; LIKE's ``_`` also matches
# itself, so the patterns need no escapes.
DEAD_LETTER_REASON_CLASSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("subject_mismatch", ("subject field %",)),
    ("unknown_subject", ("subject % is not part of the event contract",)),
    ("too_large", ("body is % bytes, over the %",)),
    ("not_utf8", ("body is not valid UTF-8%",)),
    ("not_json", ("body is not valid JSON%",)),
    ("not_object", ("body must be a JSON object%",)),
    ("bad_id", ("event_id %", "correlation_id %", "ids must not contain NUL%")),
    ("bad_time", ("occurred_at %",)),
    ("bad_payload", ("payload%",)),
    ("conflicting_duplicate", ("duplicate event_id %",)),
)


def _like(pattern: str, text: str) -> bool:
    """SQL LIKE without an escape character (``%`` any run, ``_`` one character) in Python."""
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


def reason_class(reason: str) -> str:
    """The class of a dead-letter reason, as the metrics exporter's SQL computes it."""
    for name, patterns in DEAD_LETTER_REASON_CLASSES:
        if any(_like(p, reason) for p in patterns):
            return name
    return "other"


__all__ = [
    "ALL_SUBJECTS",
    "CHAT_PERSIST",
    "DEAD_LETTER_REASON_CLASSES",
    "FLOW_LINEAGE",
    "LEGACY_SUBJECTS",
    "SEMANTIC_SEARCH",
    "SUBJECTS",
    "TOOL_CALL",
    "DeadLetter",
    "InboxEvent",
    "canonical_subject",
    "reason_class",
    "subjects_for",
    "validate_message",
]
