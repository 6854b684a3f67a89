"""Telemetry events to the lab's Vector: newline-delimited JSON POSTed from a background thread.

A run must never wait on, or fail because of, the telemetry receiver. So:

- :meth:`Telemetry.emit` only appends to a bounded in-memory buffer and returns at once; when the
  buffer is full the event is dropped and counted.
- One daemon thread takes batches off the buffer and POSTs them as ``application/x-ndjson``
  (the framing Vector's ``http_server`` source decodes with ``framing.method =
  "newline_delimited"`` and ``decoding.codec = "json"``). A batch the receiver does not accept
  (refused, timed out, non-2xx) is dropped and counted; after a failure the sender pauses, and
  batches that come due meanwhile are dropped too, so a dead receiver costs no time per event.
- :meth:`Telemetry.close` waits a bounded time for the buffer to empty, then counts whatever is
  still queued or unconfirmed as dropped. The counts go into the run's metadata.

No URL means a disabled :class:`Telemetry`: ``emit`` is a no-op and nothing is started.
Events carry only figures and identifiers that the callers pass; nothing from the environment.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import orjson

from model_foundry.lib import settings

log = logging.getLogger(__name__)

DEFAULT_MAX_BUFFER = 10_000
DEFAULT_BATCH_SIZE = 500
DEFAULT_FLUSH_INTERVAL_S = 0.5
DEFAULT_POST_TIMEOUT_S = 2.0
DEFAULT_CLOSE_TIMEOUT_S = 2.0
# After a failed POST the receiver gets this long before the next try; batches due meanwhile
# are dropped rather than queued behind a receiver that is down.
DEFAULT_PAUSE_AFTER_FAILURE_S = 5.0

# The event each rebuilt session_flow row sends, with the session's correlation_id.
SESSION_FLOW_EVENT = "model_foundry.session_flow"


def redact_url(url: str) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@``, fit for logs and metadata."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


def split_credentials(url: str) -> tuple[str, str | None]:
    """``url`` without ``user:password@`` and the Basic ``Authorization`` header it stood for.

    Vector's ``http_server`` source can require basic auth; urllib would not send credentials
    written into the URL, and must never log them.
    """
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    host = parts.netloc.rsplit("@", 1)[1]
    header = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return urlunsplit(parts._replace(netloc=host)), header


def utc_timestamp(now: float | None = None) -> str:
    """RFC 3339 UTC with milliseconds, the form Vector and Loki parse without configuration."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class TelemetryCounts:
    """What became of the events a :class:`Telemetry` was given."""

    emitted: int
    sent: int
    dropped: int
    failed_posts: int

    def as_metadata(self) -> dict[str, int]:
        return {
            "telemetry_events_sent": self.sent,
            "telemetry_events_dropped": self.dropped,
            "telemetry_failed_posts": self.failed_posts,
        }


class _Sender:
    """The buffer and the thread that empties it; one per :class:`Telemetry`."""

    def __init__(
        self,
        url: str,
        *,
        max_buffer: int,
        batch_size: int,
        flush_interval_s: float,
        post_timeout_s: float,
        pause_after_failure_s: float,
    ) -> None:
        self.url, self._authorization = split_credentials(url)
        self.max_buffer = max_buffer
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_s
        self.post_timeout_s = post_timeout_s
        self.pause_after_failure_s = pause_after_failure_s
        self._buffer: deque[bytes] = deque()
        self._cond = threading.Condition()
        self._closing = False
        self._in_flight = 0
        self._paused_until = 0.0
        self._warned = False
        self.emitted = 0
        self.sent = 0
        self.dropped = 0
        self.failed_posts = 0
        self._thread = threading.Thread(
            target=self._loop, name="model-foundry-telemetry", daemon=True
        )
        self._thread.start()

    def put(self, line: bytes) -> None:
        with self._cond:
            self.emitted += 1
            if self._closing or len(self._buffer) >= self.max_buffer:
                self.dropped += 1
                return
            self._buffer.append(line)
            if len(self._buffer) >= self.batch_size:
                self._cond.notify()

    def _take_batch(self) -> list[bytes] | None:
        """The next batch once one is full, the flush interval passed, or closing; None: stop."""
        with self._cond:
            deadline = time.monotonic() + self.flush_interval_s
            while not self._closing and len(self._buffer) < self.batch_size:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            if not self._buffer:
                return None if self._closing else []
            batch = [self._buffer.popleft() for _ in range(min(self.batch_size, len(self._buffer)))]
            self._in_flight = len(batch)
            return batch

    def _loop(self) -> None:
        while True:
            batch = self._take_batch()
            if batch is None:
                return
            if batch:
                delivered = self._post(batch)
                with self._cond:
                    self._in_flight = 0
                    if delivered:
                        self.sent += len(batch)
                    else:
                        self.dropped += len(batch)
                    self._cond.notify_all()

    def _post(self, batch: list[bytes]) -> bool:
        if time.monotonic() < self._paused_until:
            return False
        headers = {"Content-Type": "application/x-ndjson"}
        if self._authorization:
            headers["Authorization"] = self._authorization
        request = urllib.request.Request(
            self.url, data=b"".join(batch), method="POST", headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=self.post_timeout_s) as response:
                ok = 200 <= response.status < 300
                reason = f"HTTP {response.status}"
        except urllib.error.HTTPError as exc:
            ok, reason = False, f"HTTP {exc.code}"
        except (OSError, ValueError) as exc:
            # URLError, refused connections, timeouts and resets are all OSErrors here.
            ok, reason = False, type(getattr(exc, "reason", exc)).__name__
        if ok:
            return True
        self.failed_posts += 1
        self._paused_until = time.monotonic() + self.pause_after_failure_s
        if not self._warned:
            self._warned = True
            log.warning(
                "Telemetry receiver %s did not take a batch (%s); "
                "events are dropped and counted until it answers again.",
                redact_url(self.url),
                reason,
            )
        return False

    def close(self, timeout_s: float) -> None:
        """Give the thread up to ``timeout_s`` to deliver what is queued, then stop it."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            while (self._buffer or self._in_flight) and time.monotonic() < deadline:
                self._cond.wait(max(0.0, deadline - time.monotonic()))
            # What the thread could not deliver in time is not going to count as delivered.
            self.dropped += len(self._buffer) + self._in_flight
            self._buffer.clear()
            self._in_flight = 0
        self._thread.join(max(0.0, deadline - time.monotonic()))


class Telemetry:
    """Events of one run and asset, stamped with ``event``, ``ts``, ``run_id`` and ``asset``."""

    def __init__(
        self,
        url: str | None,
        *,
        run_id: str | None = None,
        asset: str | None = None,
        max_buffer: int = DEFAULT_MAX_BUFFER,
        batch_size: int = DEFAULT_BATCH_SIZE,
        flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S,
        post_timeout_s: float = DEFAULT_POST_TIMEOUT_S,
        pause_after_failure_s: float = DEFAULT_PAUSE_AFTER_FAILURE_S,
    ) -> None:
        self.run_id = run_id
        self.asset = asset
        self._closed_counts: TelemetryCounts | None = None
        self._sender = (
            _Sender(
                url,
                max_buffer=max_buffer,
                batch_size=batch_size,
                flush_interval_s=flush_interval_s,
                post_timeout_s=post_timeout_s,
                pause_after_failure_s=pause_after_failure_s,
            )
            if url
            else None
        )

    @classmethod
    def disabled(cls) -> Telemetry:
        return cls(None)

    @property
    def enabled(self) -> bool:
        return self._sender is not None

    def emit(self, event: str, fields: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        """Queue one event; never blocks and never raises for the receiver's sake."""
        if self._sender is None:
            return
        body: dict[str, Any] = {
            "event": event,
            "ts": utc_timestamp(),
            "run_id": self.run_id,
            "asset": self.asset,
        }
        if fields:
            body.update(fields)
        body.update(more)
        line = orjson.dumps(body, default=str, option=orjson.OPT_NON_STR_KEYS) + b"\n"
        self._sender.put(line)

    def counts(self) -> TelemetryCounts:
        if self._closed_counts is not None:
            return self._closed_counts
        s = self._sender
        if s is None:
            return TelemetryCounts(emitted=0, sent=0, dropped=0, failed_posts=0)
        return TelemetryCounts(
            emitted=s.emitted, sent=s.sent, dropped=s.dropped, failed_posts=s.failed_posts
        )

    def close(self, timeout_s: float = DEFAULT_CLOSE_TIMEOUT_S) -> TelemetryCounts:
        """Deliver what is queued within ``timeout_s``; the final counts. Safe to call twice."""
        if self._closed_counts is None:
            if self._sender is not None:
                self._sender.close(timeout_s)
            self._closed_counts = self.counts()
        return self._closed_counts

    def metadata(self) -> dict[str, int]:
        """The counts as run metadata; empty when telemetry is off, so the UI shows no noise."""
        return self.counts().as_metadata() if self.enabled else {}

    def __enter__(self) -> Telemetry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def for_run(run_id: str | None, asset: str | None) -> Telemetry:
    """The telemetry of one asset run, to ``MODEL_FOUNDRY_TELEMETRY_URL`` (disabled when unset)."""
    return Telemetry(settings.telemetry_url(), run_id=run_id, asset=asset)


__all__ = [
    "SESSION_FLOW_EVENT",
    "Telemetry",
    "TelemetryCounts",
    "for_run",
    "redact_url",
    "split_credentials",
    "utc_timestamp",
]
