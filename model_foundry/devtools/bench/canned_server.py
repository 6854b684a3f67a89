"""A canned OpenAI-compatible server for ``bench client``, run in its own process.

Every answer is the same ``tokens`` tokens, streamed one event per token at one token every
``interval_s`` per request, as vLLM streams them: chat or completions chunks, the last
choice chunk with its ``finish_reason``, then a chunk with no choices that carries the
usage (``stream_options.include_usage``), then ``[DONE]``. Not streaming, the whole answer
comes as one JSON body once its tokens' time has passed.

Every byte it sends is built before the first request (chunked transfer framing included),
and one timer tick per ``interval_s`` advances every open stream by one event, so the server's
own CPU per token is one socket write: what the bench measures is the client.

Paths: ``/s<i>/v1/chat/completions`` and ``/s<i>/v1/completions`` (``i``: the slot; one server
stands in for all of them), ``/s<i>/v1/models``, and the bench's own ``POST /_bench/reset``
(``{"pid": ...}``: the client process whose CPU is read when its first request arrives) and
``GET /_bench/stats``. Connections are kept alive, as the clients' pools expect.

A reset with ``"hold_at": n, "hold_s": h`` measures the client asleep: the server answers
nothing until ``n`` requests are open, then, once those have settled (``HOLD_SETTLE_S``),
reads the client's CPU, waits ``h`` seconds with every request out and no byte sent, reads
it again, and only then answers them all.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

MODEL = "canned"
PROMPT_TOKENS = 32
WORD = " tok"
# A stream whose socket holds this much unsent data skips ticks: the client is not reading,
# and its answer falls behind the offered rate instead of piling up in the server's memory.
BACKLOG_BYTES = 64 * 1024
# After the last held request arrives, the client's own work on sending it (its bookkeeping,
# its log line) is the request's cost, not waiting: the hold's reading starts this much later.
HOLD_SETTLE_S = 0.25
# A client that never opens ``hold_at`` requests at once is answered after this long, and its
# hold has no figures.
HOLD_GIVE_UP_S = 20.0


def _chunk(payload: bytes) -> bytes:
    """``payload`` as one HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _event(obj: dict[str, Any]) -> bytes:
    return _chunk(b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n")


def _usage(tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": tokens,
        "total_tokens": PROMPT_TOKENS + tokens,
    }


@dataclass(frozen=True)
class Canned:
    """The prebuilt bytes of one API's answers."""

    head: bytes
    frames: tuple[bytes, ...]
    tail: bytes
    whole: bytes


def build(api: str, tokens: int) -> Canned:
    """Every byte of a ``tokens``-token answer on ``api`` (chat or completions)."""
    chat = api == "chat"
    base: dict[str, Any] = {
        "id": "chatcmpl-canned" if chat else "cmpl-canned",
        "object": "chat.completion.chunk" if chat else "text_completion",
        "created": 0,
        "model": MODEL,
    }

    def choice(text: str, finish: str | None) -> dict[str, Any]:
        if chat:
            return {"index": 0, "delta": {"content": text}, "logprobs": None,
                    "finish_reason": finish}  # fmt: skip
        return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish,
                "stop_reason": None}  # fmt: skip

    frames = [
        _event({**base, "choices": [choice(WORD, "length" if i == tokens - 1 else None)]})
        for i in range(tokens)
    ]
    if chat:
        # vLLM opens a chat stream with the role and no text.
        first = {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                 "finish_reason": None}  # fmt: skip
        frames[0] = _event({**base, "choices": [first]}) + frames[0]
    tail = (
        _event({**base, "choices": [], "usage": _usage(tokens)})
        + _chunk(b"data: [DONE]\n\n")
        + b"0\r\n\r\n"
    )
    text = WORD * tokens
    if chat:
        message = {"role": "assistant", "content": text, "reasoning_content": None}
        answer = {"index": 0, "message": message, "logprobs": None, "finish_reason": "length"}
    else:
        answer = {"index": 0, "text": text, "logprobs": None, "finish_reason": "length"}
    whole_body = json.dumps(
        {
            **base,
            "object": "chat.completion" if chat else "text_completion",
            "choices": [answer],
            "usage": _usage(tokens),
        }
    ).encode()
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    whole = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        len(whole_body),
        whole_body,
    )
    return Canned(head, tuple(frames), tail, whole)


def _json_response(obj: Any, status: str = "200 OK") -> bytes:
    body = json.dumps(obj).encode()
    return b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        status.encode(),
        len(body),
        body,
    )


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds ``pid`` has used so far, with its children it waited for (Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except OSError:
        return None
    # After the command name: state is field 3, utime..cstime are fields 14-17.
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass
class Stats:
    """One measured run, from the server's side."""

    pid: int | None = None
    started: int = 0
    completed: int = 0
    tokens_sent: int = 0
    first_request_at: float | None = None
    last_end_at: float | None = None
    # Seconds of request time: from the request's arrival to its last byte, summed.
    busy_s: float = 0.0
    in_flight: int = 0
    max_in_flight: int = 0
    # Ticks a stream could not take because its client had not read what it was sent.
    stalled_ticks: int = 0
    client_cpu_at_first_request_s: float | None = None
    unknown_paths: dict[str, int] = field(default_factory=dict)
    # The hold (see the module's doc): what was asked, and the client's CPU over it.
    hold_at: int = 0
    hold_s: float = 0.0
    held: int = 0
    hold_cpu_s: float | None = None
    hold_span_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        span = (
            self.last_end_at - self.first_request_at
            if self.first_request_at is not None and self.last_end_at is not None
            else None
        )
        return {
            "pid": self.pid,
            "started": self.started,
            "completed": self.completed,
            "tokens_sent": self.tokens_sent,
            "span_s": span,
            "busy_s": self.busy_s,
            "max_in_flight": self.max_in_flight,
            "stalled_ticks": self.stalled_ticks,
            "client_cpu_at_first_request_s": self.client_cpu_at_first_request_s,
            "unknown_paths": self.unknown_paths,
            "held": self.held,
            "hold_cpu_s": self.hold_cpu_s,
            "hold_span_s": self.hold_span_s,
        }


class _Stream:
    __slots__ = ("canned", "next", "started", "transport")

    def __init__(self, transport: asyncio.Transport, canned: Canned, started: float) -> None:
        self.transport = transport
        self.canned = canned
        self.next = 0
        self.started = started


class Server:
    def __init__(self, tokens: int, interval_s: float) -> None:
        self.tokens = tokens
        self.interval_s = interval_s
        self.canned = {"chat": build("chat", tokens), "completions": build("completions", tokens)}
        self.streams: list[_Stream] = []
        self.stats = Stats()
        self.wake = asyncio.Event()
        # Requests the hold keeps unanswered: (transport, api, stream, arrival).
        self.holding: list[tuple[asyncio.Transport, str, bool, float]] | None = None

    def begin(self, transport: asyncio.Transport, api: str, stream: bool) -> None:
        now = time.monotonic()
        st = self.stats
        loop = asyncio.get_running_loop()
        if st.first_request_at is None:
            st.first_request_at = now
            if st.pid is not None:
                st.client_cpu_at_first_request_s = process_cpu_s(st.pid)
            if st.hold_at > 0:
                self.holding = []
                loop.call_later(HOLD_GIVE_UP_S, self._release, self.holding)
        st.started += 1
        st.in_flight += 1
        st.max_in_flight = max(st.max_in_flight, st.in_flight)
        if self.holding is not None:
            self.holding.append((transport, api, stream, now))
            if len(self.holding) == st.hold_at:
                st.held = len(self.holding)
                loop.call_later(HOLD_SETTLE_S, self._hold, self.holding)
            return
        self._answer(transport, api, stream, now)

    def _hold(self, holding: list[tuple[asyncio.Transport, str, bool, float]]) -> None:
        st = self.stats
        if holding is not self.holding or st.pid is None:
            return
        before, start = process_cpu_s(st.pid), time.monotonic()

        def done() -> None:
            after = process_cpu_s(st.pid) if st.pid is not None else None
            if holding is self.holding and before is not None and after is not None:
                st.hold_cpu_s = after - before
                st.hold_span_s = time.monotonic() - start
            self._release(holding)

        asyncio.get_running_loop().call_later(st.hold_s, done)

    def _release(self, holding: list[tuple[asyncio.Transport, str, bool, float]]) -> None:
        """Answer every held request; later ones are answered as they come."""
        if holding is not self.holding:
            return
        self.holding = None
        for transport, api, stream, arrived in holding:
            self._answer(transport, api, stream, arrived)

    def _answer(self, transport: asyncio.Transport, api: str, stream: bool, now: float) -> None:
        canned = self.canned[api]
        if stream:
            transport.write(canned.head)
            self.streams.append(_Stream(transport, canned, now))
            self.wake.set()
        else:
            delay = self.tokens * self.interval_s
            asyncio.get_running_loop().call_later(delay, self._whole, transport, canned, now)

    def _whole(self, transport: asyncio.Transport, canned: Canned, started: float) -> None:
        if not transport.is_closing():
            transport.write(canned.whole)
            self.stats.tokens_sent += self.tokens
        self._end(started)

    def _end(self, started: float) -> None:
        now = time.monotonic()
        st = self.stats
        st.completed += 1
        st.in_flight -= 1
        st.busy_s += now - started
        st.last_end_at = now

    async def ticker(self) -> None:
        """One event to every open stream per tick, ticks on a fixed schedule."""
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            if not self.streams:
                self.wake.clear()
                await self.wake.wait()
                due = loop.time()
            due += self.interval_s
            await asyncio.sleep(max(0.0, due - loop.time()))
            live: list[_Stream] = []
            for s in self.streams:
                t = s.transport
                if t.is_closing():
                    self._end(s.started)
                    continue
                if t.get_write_buffer_size() > BACKLOG_BYTES:
                    self.stats.stalled_ticks += 1
                    live.append(s)
                    continue
                frames = s.canned.frames
                if s.next == len(frames) - 1:
                    t.write(frames[s.next] + s.canned.tail)
                    self.stats.tokens_sent += len(frames)
                    self._end(s.started)
                    continue
                t.write(frames[s.next])
                s.next += 1
                live.append(s)
            self.streams = live

    def reset(self, pid: int | None, hold_at: int = 0, hold_s: float = 0.0) -> None:
        self.stats = Stats(pid=pid, hold_at=hold_at, hold_s=hold_s)
        self.holding = None


class _Conn(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            length = 0
            for line in head[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            method, path = ([*head[0].split(" "), "", ""])[:2]
            self.handle(method, path, body)

    def handle(self, method: str, path: str, body: bytes) -> None:
        t = self.transport
        assert t is not None
        server = self.server
        if path == "/_bench/reset":
            req = json.loads(body or b"{}")
            pid = req.get("pid")
            server.reset(int(pid) if pid is not None else None,
                         int(req.get("hold_at", 0)), float(req.get("hold_s", 0.0)))  # fmt: skip
            t.write(_json_response({"ok": True}))
            return
        if path == "/_bench/stats":
            t.write(_json_response(server.stats.as_dict()))
            return
        rest = path.partition("/v1/")[2]
        if rest in ("chat/completions", "completions") and method == "POST":
            req = json.loads(body or b"{}")
            server.begin(t, "chat" if rest == "chat/completions" else "completions",
                         bool(req.get("stream")))  # fmt: skip
            return
        if rest == "models":
            t.write(_json_response({"object": "list", "data": [
                {"id": MODEL, "object": "model", "max_model_len": 32768}]}))  # fmt: skip
            return
        if path.endswith("/tokenize") and method == "POST":
            # vLLM's shape; the bench's prompts are short, so fitting rarely asks.
            t.write(_json_response({"count": max(1, len(body) // 4), "max_model_len": 32768}))
            return
        seen = server.stats.unknown_paths
        seen[path] = seen.get(path, 0) + 1
        t.write(_json_response({"object": "error", "message": "not found"}, "404 Not Found"))


async def serve(port: int, tokens: int, interval_s: float) -> None:
    server = Server(tokens, interval_s)
    loop = asyncio.get_running_loop()
    listener = await loop.create_server(lambda: _Conn(server), "127.0.0.1", port, backlog=1024)
    ticker = asyncio.create_task(server.ticker())
    port = listener.sockets[0].getsockname()[1]
    # The parent reads the port from this line.
    print(json.dumps({"port": port}), flush=True)
    try:
        await listener.serve_forever()
    finally:
        ticker.cancel()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="canned_server")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--tokens", type=int, default=256, help="tokens an answer")
    p.add_argument("--interval-ms", type=float, default=2.0, help="ms between a stream's tokens")
    args = p.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, args.tokens, args.interval_ms / 1000.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Canned", "Server", "Stats", "build", "main", "process_cpu_s", "serve"]
