"""The transport: one aiohttp session per slot client, its pool as large as the slot's
``parallel`` (one connection per request the slot serves at once; more would only queue
server-side), idle connections let go after ``KEEPALIVE_EXPIRY_S``.

aiohttp directly, not the openai SDK on httpx: on ``bench client`` the SDK's request
building, typed responses and httpx's reading cost most of the client's CPU per request
and per event (docs/slots.md says what was measured). The session is opened with the first
request, inside the event loop that sends it. aiohttp's own errors leave here as the SDK's
classes (``api_errors``), the transport's exception as their cause.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from model_foundry.lib.slots.api_errors import APIConnectionError, APITimeoutError, status_error

if TYPE_CHECKING:
    import aiohttp

# aiohttp's read buffer (64 KiB by default) pauses the socket each time it fills: a long
# event would come in many small reads. 1 MiB keeps a 1 MB event to a few.
READ_BUFSIZE = 1 << 20


class _Sent:
    """One sending of a request: whether it went on a pooled connection."""

    reused = False


async def _mark_reused(_session: Any, context: Any, _params: Any) -> None:
    sent = context.trace_request_ctx
    if isinstance(sent, _Sent):
        sent.reused = True


class Transport:
    """POSTs JSON to one slot's OpenAI routes (``base_url`` ending in ``/v1``)."""

    def __init__(
        self, base_url: str, api_key: str, *, parallel: int, connect_s: float, keepalive_s: float
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.parallel = parallel
        self.connect_s = connect_s
        self.keepalive_s = keepalive_s
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        import aiohttp

        connector = aiohttp.TCPConnector(
            limit=self.parallel, limit_per_host=0, keepalive_timeout=self.keepalive_s
        )
        reuse = aiohttp.TraceConfig()
        reuse.on_connection_reuseconn.append(_mark_reused)
        self._session = aiohttp.ClientSession(
            connector=connector,
            trace_configs=[reuse],
            # The whole request's deadline is the client's (``asyncio.timeout``); here only
            # the connection's.
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.connect_s),
            headers=self._headers,
            read_bufsize=READ_BUFSIZE,
            skip_auto_headers=("User-Agent",),
        )
        return self._session

    @contextlib.asynccontextmanager
    async def post(self, path: str, body: dict[str, Any]) -> AsyncIterator[aiohttp.ClientResponse]:
        """The response to ``body`` POSTed to ``path`` (``/chat/completions``), its status
        checked: an error status raises the SDK's class for it, a transport failure
        (connecting, or reading the body inside the ``with``) ``APIConnectionError``."""
        import aiohttp

        session = self._session or self._open()
        try:
            resp = await self._send(session, self.base_url + path, orjson.dumps(body))
            async with resp:
                if resp.status >= 400:
                    raise status_error(resp.status, await resp.text(errors="replace"))
                yield resp
        except aiohttp.ServerTimeoutError as exc:
            raise APITimeoutError() from exc
        except aiohttp.ClientError as exc:
            raise APIConnectionError() from exc

    async def _send(
        self, session: aiohttp.ClientSession, url: str, data: bytes
    ) -> aiohttp.ClientResponse:
        """The response's head. A pooled connection the server has closed (idle too long,
        or its keep-alive count spent) fails at once, before any answer: the server never
        took the request, so it goes again, at most once per connection the pool can hold.
        On a loaded machine the pool hands such a connection out before the event loop has
        read the server's close. A new connection that fails is not tried again here."""
        import aiohttp

        for _ in range(self.parallel):
            sent = _Sent()
            try:
                return await session.post(url, data=data, trace_request_ctx=sent)
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                if not sent.reused:
                    raise
        return await session.post(url, data=data)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def wire_body(req: dict[str, Any]) -> dict[str, Any]:
    """``build_request``'s keyword arguments as the JSON body sent: ``extra_body``'s fields
    among the rest, as the SDK merged them."""
    extra = req.get("extra_body")
    if extra is None:
        return req
    body = {k: v for k, v in req.items() if k != "extra_body"}
    body.update(extra)
    return body


__all__ = ["READ_BUFSIZE", "Transport", "wire_body"]
