"""The transport's handling of pooled connections the server has closed."""

from __future__ import annotations

import asyncio
import json

import pytest

from model_foundry.devtools.ports import free_port
from model_foundry.lib.slots.api_errors import APIConnectionError
from model_foundry.lib.slots.transport import Transport

_BODY = json.dumps({"ok": True}).encode()


async def _one_answer_a_connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answered: list[int]
) -> None:
    """Answers the first request of a connection (HTTP/1.1, so it stays open), then closes
    the connection without answering the next: a server whose keep-alive is spent."""
    first = True
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await reader.readexactly(length)
        if not first:
            writer.close()
            return
        first = False
        answered.append(1)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(_BODY)}\r\n\r\n".encode()
            + _BODY
        )
        await writer.drain()


async def _requests(n: int, parallel: int) -> tuple[list[dict], int]:
    answered: list[int] = []
    server = await asyncio.start_server(
        lambda r, w: _one_answer_a_connection(r, w, answered), "127.0.0.1", 0
    )
    port = server.sockets[0].getsockname()[1]
    transport = Transport(
        f"http://127.0.0.1:{port}/v1", "k", parallel=parallel, connect_s=5, keepalive_s=60
    )
    out = []
    try:
        for i in range(n):
            async with transport.post("/chat/completions", {"i": i}) as resp:
                out.append(await resp.json())
    finally:
        await transport.aclose()
        server.close()
        await server.wait_closed()
    return out, len(answered)


def test_a_request_on_a_connection_the_server_closed_goes_again_on_another() -> None:
    """Each request after the first finds the pooled connection closed by the server and
    is answered on a new one: none fails, each is answered once."""
    out, answered = asyncio.run(_requests(4, parallel=2))
    assert out == [{"ok": True}] * 4
    assert answered == 4


def test_a_server_that_is_down_fails_in_one_error() -> None:
    """A connection that cannot be made is not tried again here (the dispatcher's retries
    and cool-down decide): one ``APIConnectionError``."""

    async def down() -> None:
        url = f"http://127.0.0.1:{free_port()}/v1"
        transport = Transport(url, "k", parallel=4, connect_s=2, keepalive_s=1)
        try:
            async with transport.post("/chat/completions", {}):
                pass
        finally:
            await transport.aclose()

    with pytest.raises(APIConnectionError):
        asyncio.run(down())
