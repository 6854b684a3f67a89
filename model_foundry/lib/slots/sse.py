"""Reading a streamed answer: the JSON data of each server-sent event, one parse per event.

One ``orjson`` parse per event, on plain dicts: the SDK built typed models for every chunk,
which cost several times what the parse does. Chunks are joined however the transport cut
them, so an event of any length (a 1 MB event, a whole answer in one event) is read whole.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from model_foundry.lib.slots.api_errors import APIError


async def sse_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[dict[str, Any]]:
    """The JSON data of each server-sent event in ``chunks``, until ``[DONE]``; an event that
    carries ``error`` (a server failing mid-generation) raises ``APIError``, as the SDK's own
    stream did."""
    pending = b""
    loads = orjson.loads
    async for data in chunks:
        pending = pending + data if pending else data
        if b"\r" in pending:
            pending = pending.replace(b"\r\n", b"\n")
        if b"\n\n" not in pending:
            continue
        *events, pending = pending.split(b"\n\n")
        for raw in events:
            if raw.startswith(b"data: ") and b"\n" not in raw:
                kind, body = None, raw[6:]
            else:
                kind, body = _sse_fields(raw)
                if body is None:
                    continue
            if body.startswith(b"[DONE]"):
                # Read to the end, so the connection goes back to the pool for the next
                # request rather than being closed half-read.
                async for _ in chunks:
                    pass
                return
            event = loads(body)
            if isinstance(event, dict) and (kind == b"error" or event.get("error")):
                _raise_stream_error(event)
            yield event
    kind, body = _sse_fields(pending)
    if body is not None and not body.startswith(b"[DONE]"):
        event = loads(body)
        if isinstance(event, dict) and event.get("error"):
            _raise_stream_error(event)
        yield event


def _sse_fields(raw: bytes) -> tuple[bytes | None, bytes | None]:
    """(event type, data) of one event's lines; data None for a comment or an empty event."""
    if raw.startswith(b"data: ") and b"\n" not in raw:
        return None, raw[6:]
    kind: bytes | None = None
    data: list[bytes] = []
    for line in raw.split(b"\n"):
        name, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if name == b"data":
            data.append(value)
        elif name == b"event":
            kind = value
    return kind, b"\n".join(data) if data else None


def _raise_stream_error(event: dict[str, Any]) -> None:
    error = event.get("error", event)
    message = error.get("message") if isinstance(error, dict) else None
    if not message or not isinstance(message, str):
        message = "An error occurred during streaming"
    raise APIError(message, body=error)


__all__ = ["sse_events"]
