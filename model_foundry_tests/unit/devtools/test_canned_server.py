"""The canned server's prebuilt answers are what vLLM sends: chunked SSE events of one token
each, the finish reason on the last choice, the usage alone in the event after it, then
``[DONE]``; and a whole JSON answer when not streaming."""

from __future__ import annotations

import json

import pytest

from model_foundry.devtools.bench.canned_server import PROMPT_TOKENS, WORD, build


def _unchunk(data: bytes) -> bytes:
    out, rest = b"", data
    while True:
        size, _, rest = rest.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            assert rest == b"\r\n"
            return out
        out, rest = out + rest[:n], rest[n:]
        assert rest[:2] == b"\r\n"
        rest = rest[2:]


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_stream_events_carry_tokens_finish_and_usage(api: str) -> None:
    canned = build(api, 5)
    assert b"transfer-encoding: chunked" in canned.head
    body = _unchunk(b"".join(canned.frames) + canned.tail).decode()
    events = [e for e in body.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    parsed = [json.loads(e[6:]) for e in events[:-1]]
    *chunks, usage = parsed
    assert usage["choices"] == []
    assert usage["usage"] == {
        "prompt_tokens": PROMPT_TOKENS, "completion_tokens": 5, "total_tokens": PROMPT_TOKENS + 5,
    }  # fmt: skip
    if api == "chat":
        assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        chunks = chunks[1:]
        texts = [c["choices"][0]["delta"]["content"] for c in chunks]
    else:
        texts = [c["choices"][0]["text"] for c in chunks]
    assert texts == [WORD] * 5
    finishes = [c["choices"][0]["finish_reason"] for c in chunks]
    assert finishes == [None] * 4 + ["length"]


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_whole_answer_is_one_json_body(api: str) -> None:
    head, _, body = build(api, 7).whole.partition(b"\r\n\r\n")
    assert b"content-length: %d" % len(body) in head
    answer = json.loads(body)
    choice = answer["choices"][0]
    text = choice["message"]["content"] if api == "chat" else choice["text"]
    assert text == WORD * 7
    assert answer["usage"]["completion_tokens"] == 7
