"""A stand-in for Vector's ``http_server`` source: keeps the newline-delimited JSON it is sent.

Tests and local checks point ``MODEL_FOUNDRY_TELEMETRY_URL`` at it. It decodes the body the way
Vector is configured to in ``deploy/vector/model-foundry.yaml`` (one JSON object per line) and
answers 400 to a body that does not decode, so a framing mistake fails loudly here too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

DEFAULT_PATH = "/telemetry"


class TelemetryReceiver:
    """An HTTP server on 127.0.0.1 that records every event POSTed to ``path``."""

    def __init__(self, port: int = 0, path: str = DEFAULT_PATH) -> None:
        self.path = path
        self.events: list[dict[str, Any]] = []
        self.requests = 0
        self.content_types: list[str] = []
        self.authorizations: list[str | None] = []
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.path != receiver.path:
                    self.send_error(404)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                try:
                    events = [orjson.loads(line) for line in body.splitlines() if line.strip()]
                except orjson.JSONDecodeError:
                    self.send_error(400, "body is not newline-delimited JSON")
                    return
                receiver._keep(events, body, self.headers)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._thread: threading.Thread | None = None

    def _keep(self, events: list[dict[str, Any]], body: bytes, headers: Any) -> None:
        with self._lock:
            self.requests += 1
            self.content_types.append(headers.get("Content-Type", ""))
            self.authorizations.append(headers.get("Authorization"))
            self.bodies.append(body)
            self.events.extend(events)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def start(self) -> TelemetryReceiver:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def named(self, event: str) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self.events if e.get("event") == event]


@contextmanager
def running_receiver(port: int = 0, path: str = DEFAULT_PATH) -> Iterator[TelemetryReceiver]:
    receiver = TelemetryReceiver(port, path).start()
    try:
        yield receiver
    finally:
        receiver.stop()
