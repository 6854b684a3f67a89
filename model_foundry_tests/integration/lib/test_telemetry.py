"""The telemetry sender against real HTTP receivers: delivered, refused, slow, switched off."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from model_foundry.devtools.telemetry_receiver import TelemetryReceiver, running_receiver
from model_foundry.lib.telemetry import Telemetry


@pytest.fixture
def receiver() -> Iterator[TelemetryReceiver]:
    with running_receiver() as r:
        yield r


def _closed_port() -> int:
    """A loopback port nobody listens on: bound, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_events_arrive_as_ndjson_batches_with_run_and_asset(receiver: TelemetryReceiver) -> None:
    tel = Telemetry(receiver.url, run_id="run-1", asset="session_summaries", batch_size=7)
    for i in range(20):
        tel.emit("model_foundry.completion", {"slot": "naughty", "i": i}, status="ok")
    counts = tel.close()

    assert counts.emitted == 20 and counts.sent == 20 and counts.dropped == 0
    events = receiver.named("model_foundry.completion")
    assert [e["i"] for e in events] == list(range(20))
    first = events[0]
    assert first["run_id"] == "run-1" and first["asset"] == "session_summaries"
    assert first["slot"] == "naughty" and first["status"] == "ok"
    assert first["ts"].endswith("Z") and "T" in first["ts"]
    # Batched: fewer POSTs than events, each one newline-delimited JSON.
    assert 3 <= receiver.requests < 20
    assert set(receiver.content_types) == {"application/x-ndjson"}
    assert tel.metadata() == {
        "telemetry_events_sent": 20,
        "telemetry_events_dropped": 0,
        "telemetry_failed_posts": 0,
    }


def test_receiver_down_drops_and_counts_without_raising() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/telemetry"
    tel = Telemetry(url, run_id="r", asset="a", batch_size=10)
    for i in range(35):
        tel.emit("model_foundry.inbox_drain", received=i)
    counts = tel.close()
    assert counts.emitted == 35
    assert counts.sent == 0
    assert counts.dropped == 35
    assert counts.failed_posts >= 1


class _Gate:
    """A receiver whose every request waits until the test opens the gate."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.received = 0
        gate = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                gate.open.wait(30)
                gate.received += len(body.splitlines())
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/telemetry"


def test_slow_receiver_bounded_buffer_drops_the_overflow() -> None:
    gate = _Gate()
    try:
        tel = Telemetry(gate.url, batch_size=5, max_buffer=10, post_timeout_s=30)
        for i in range(200):
            tel.emit("model_foundry.completion", i=i)
        # At most one batch is stuck in the receiver and max_buffer more are queued.
        assert tel.counts().dropped >= 200 - 10 - 5
        gate.open.set()
        counts = tel.close(timeout_s=10)
        assert counts.emitted == 200
        assert counts.sent + counts.dropped == 200
        assert counts.sent == gate.received
        assert counts.sent <= 15
    finally:
        gate.open.set()
        gate.server.shutdown()
        gate.server.server_close()


def test_emit_after_close_is_counted_as_dropped(receiver: TelemetryReceiver) -> None:
    tel = Telemetry(receiver.url)
    tel.emit("model_foundry.completion")
    tel.close()
    tel.emit("model_foundry.completion")
    assert tel.close().sent == 1


def test_credentials_in_the_url_become_basic_auth_never_part_of_the_target(
    receiver: TelemetryReceiver,
) -> None:
    url = receiver.url.replace("http://", "http://vector:s3cr%40t@")
    tel = Telemetry(url, run_id="r")
    tel.emit("model_foundry.completion")
    assert tel.close().sent == 1
    assert receiver.authorizations == ["Basic dmVjdG9yOnMzY3JAdA=="]  # vector:s3cr@t
    assert b"s3cr" not in b"".join(receiver.bodies)
