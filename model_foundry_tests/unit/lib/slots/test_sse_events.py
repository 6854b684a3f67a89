"""The slot client's own reading of a streamed answer: events however the transport cuts the
bytes, long events whole, ``[DONE]`` the end, and an error event a retryable ``APIError``
that reads as the server's reason."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from model_foundry.lib.slots.api_errors import APIError
from model_foundry.lib.slots.errors import describe_error, is_retryable
from model_foundry.lib.slots.sse import sse_events


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def _read(data: bytes, size: int) -> list[dict[str, Any]]:
    async def collect() -> list[dict[str, Any]]:
        return [e async for e in sse_events(_chunks(data, size))]

    return asyncio.run(collect())


def _event(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


EVENTS = [{"choices": [{"index": 0, "delta": {"content": f"t{i}"}}]} for i in range(5)] + [
    {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 5}}
]


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
def test_events_are_the_same_however_the_bytes_are_cut(size: int) -> None:
    stream = b": keep-alive\n\n" + b"".join(_event(e) for e in EVENTS) + b"data: [DONE]\n\n"
    assert _read(stream, size) == EVENTS


def test_crlf_lines_and_multi_line_data() -> None:
    stream = (
        b'event: message\r\ndata: {"choices":\r\ndata: []}\r\n\r\n'
        + _event(EVENTS[0]).replace(b"\n", b"\r\n")
        + b"data: [DONE]\r\n\r\n"
    )
    assert _read(stream, 5) == [{"choices": []}, EVENTS[0]]


def test_nothing_after_done_is_read() -> None:
    stream = _event(EVENTS[0]) + b"data: [DONE]\n\n" + _event(EVENTS[1])
    assert _read(stream, 3) == [EVENTS[0]]


@pytest.mark.parametrize("size", [1 << 10, 1 << 16])
def test_a_one_megabyte_event_is_read_whole(size: int) -> None:
    text = "x" * (1 << 20)
    answer = " tok" * 50_000
    stream = _event({"choices": [{"index": 0, "delta": {"content": text}}]}) + _event(
        {"choices": [{"index": 0, "delta": {"content": answer}}]}
    )
    got = _read(stream, size)
    assert [e["choices"][0]["delta"]["content"] for e in got] == [text, answer]


def test_an_error_event_raises_the_servers_reason_retryable() -> None:
    error = {"message": "CUDA out of memory\nat step 3", "type": "server_error", "code": 500}
    stream = _event(EVENTS[0]) + _event({"error": error})
    with pytest.raises(APIError) as caught:
        _read(stream, 11)
    assert caught.value.body == error
    assert is_retryable(caught.value)
    assert describe_error(caught.value) == ("APIError", "CUDA out of memory", None)


def test_an_error_typed_event_without_a_message_still_raises() -> None:
    stream = b'event: error\ndata: {"detail": 1}\n\n'
    with pytest.raises(APIError) as caught:
        _read(stream, 4)
    assert str(caught.value) == "An error occurred during streaming"


def test_a_stream_cut_before_its_last_blank_line_keeps_its_last_event() -> None:
    stream = _event(EVENTS[0]) + _event(EVENTS[1]).rstrip(b"\n")
    assert _read(stream, 9) == EVENTS[:2]
