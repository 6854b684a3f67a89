"""A loopback HTTP server that replays recorded server responses, for client tests.

Each path answers with a fixed :class:`Reply`: a JSON body with a status, or a stream of
server-sent events (``data: <json>`` per chunk, then ``data: [DONE]``, as vLLM and llama.cpp
stream). Every request body is kept in ``requests`` so a test can check what was sent.

Fixtures under ``model_foundry_tests/fixtures/`` load with :func:`reply_from_fixture`: a
``.json`` file is one body (keys starting with ``_`` are notes, e.g. ``_source`` and
``_status``, and are not served); a ``.jsonl`` file is one stream chunk per line.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None
    # Server-sent events: each chunk is sent as ``data: <json>``; a str is sent as it is.
    chunks: list[Any] | None = None
    # A body sent verbatim (not JSON), e.g. whitespace.
    raw: str | None = None
    content_type: str = "application/json"


def load_fixture(name: str) -> Any:
    """A fixture's content: the JSON object of a ``.json`` file, the chunks of a ``.jsonl``."""
    path = FIXTURES / name
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def reply_from_fixture(name: str) -> Reply:
    data = load_fixture(name)
    if isinstance(data, list):
        return Reply(chunks=data)
    status = int(data.get("_status", 200))
    return Reply(status=status, body={k: v for k, v in data.items() if not k.startswith("_")})


@dataclass
class ReplayServer:
    """``async with ReplayServer({"/v1/chat/completions": Reply(...)}) as server``."""

    routes: dict[str, Reply]
    requests: list[tuple[str, Any]] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            sent: Any = json.loads(raw) if raw else None
        except ValueError:
            sent = raw.decode("utf-8", "replace")
        self.requests.append((request.path, sent))
        reply = self.routes.get(request.path)
        if reply is None:
            return web.json_response({"error": {"message": f"no route {request.path}"}}, status=404)
        if reply.chunks is not None:
            response = web.StreamResponse(
                status=reply.status, headers={"Content-Type": "text/event-stream"}
            )
            await response.prepare(request)
            for chunk in reply.chunks:
                data = chunk if isinstance(chunk, str) else json.dumps(chunk)
                await response.write(f"data: {data}\n\n".encode())
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            return response
        if reply.raw is not None:
            return web.Response(
                status=reply.status, text=reply.raw, content_type=reply.content_type
            )
        return web.json_response(reply.body, status=reply.status)

    async def start(self) -> ReplayServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> ReplayServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def bodies(self, path: str) -> list[Any]:
        return [body for p, body in self.requests if p == path]


__all__ = ["FIXTURES", "ReplayServer", "Reply", "load_fixture", "reply_from_fixture"]
