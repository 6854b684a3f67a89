"""A background reader that keeps the last good figures of one source and how old they are.

A scrape only ever reads what a :class:`Refresher` already holds, so it never waits for DuckDB,
NATS or a slot limiter, and a source that is busy or down shows as figures growing older and a
counted refresh error, never as a failed scrape.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class SourceUnavailableError(RuntimeError):
    """A read that could not happen this time, with a short ``reason`` label (busy, ...).

    ``expected`` marks conditions of normal operation (a writer holding the DuckDB file):
    counted, and logged at debug level only, since the figures' age already shows them.
    """

    def __init__(self, reason: str, message: str, *, expected: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.expected = expected


@dataclass(frozen=True)
class Reading(Generic[T]):
    value: T
    taken_at: float


class Refresher(Generic[T]):
    """Calls ``read`` every ``interval_s`` on its own thread; keeps the newest good result."""

    def __init__(self, source: str, read: Callable[[], T], interval_s: float) -> None:
        self.source = source
        self._read = read
        self.interval_s = interval_s
        self._latest: Reading[T] | None = None
        self._errors: Counter[str] = Counter()
        self._last_message: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._first = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"metrics-{source}", daemon=True)

    def start(self) -> Refresher[T]:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)

    def wait_first(self, timeout_s: float) -> bool:
        """True once the first read (good or not) has finished."""
        return self._first.wait(timeout_s)

    def refresh_once(self) -> None:
        try:
            value = self._read()
        except SourceUnavailableError as exc:
            self._failed(exc.reason, str(exc), level=logging.DEBUG if exc.expected else None)
        except Exception as exc:
            # An exporter that stops refreshing over one odd error would lie by omission;
            # count it, say it once, and try again next interval.
            self._failed("error", f"{type(exc).__name__}: {exc}")
        else:
            with self._lock:
                self._latest = Reading(value, time.time())
        finally:
            self._first.set()

    def _failed(self, reason: str, message: str, level: int | None = None) -> None:
        with self._lock:
            self._errors[reason] += 1
            repeated = self._last_message.get(reason) == message
            self._last_message[reason] = message
        if level is None:
            level = logging.DEBUG if repeated else logging.WARNING
        log.log(level, "metrics: reading %s failed (%s): %s", self.source, reason, message)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.refresh_once()
            self._stop.wait(self.interval_s)

    @property
    def latest(self) -> Reading[T] | None:
        with self._lock:
            return self._latest

    @property
    def errors(self) -> dict[str, int]:
        with self._lock:
            return dict(self._errors)


__all__ = ["Reading", "Refresher", "SourceUnavailableError"]
