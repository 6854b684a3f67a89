"""Records scrubbed in worker processes, in order, while the export goes on with the rest.

The scrub is most of an export's CPU (``bench datasets``: about 60% of a session export),
and a string's scrubbed form depends only on the string, the hygiene file and the salt
(``lib/hygiene/record.py``). So it can run anywhere: ``workers`` processes (started with
``spawn``: the parent holds DuckDB connections and threads, which a fork would copy half-way)
each build the same scrubber and take chunks of records; the parent reads, checks, clusters
and writes meanwhile, and takes the results back in the order the records came. What comes
out is the same record for record as scrubbing in the parent, at any number of workers. The
quality gates, as costly as the scrub on short answers, run there too (``then``).

At most ``2 x workers + 1`` chunks are out at once, so memory stays flat however long the
export. An export of fewer than :data:`POOL_FROM` records is scrubbed in the parent: starting
a worker (its imports) costs more than it would save.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing as mp
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from model_foundry.lib.hygiene.config import HygieneConfig
from model_foundry.lib.hygiene.record import RecordScrubber

ScrubRecord = Callable[[RecordScrubber, dict[str, Any]], tuple[dict[str, Any], Mapping[str, int]]]
Scrubbed = tuple[dict[str, Any], Mapping[str, int]]
# What else is worked out of each scrubbed record where it is scrubbed (the quality gates):
# stored under :data:`THEN` in the record; picklable, as it travels to the workers.
Then = Callable[[dict[str, Any]], Any]
THEN = "_then"
# A chunk's scrubbed records, the worker's pid and its peak memory (MB).
_Done = tuple[list[Scrubbed], int, float]

log = logging.getLogger(__name__)

CHUNK = 64
POOL_FROM = 2 * CHUNK * 8

# The worker's own scrubber, built once by the pool's initializer.
_scrubber: RecordScrubber | None = None
_scrub_record: ScrubRecord | None = None


def _start(config: HygieneConfig, salt: bytes, scrub_record: ScrubRecord) -> None:
    global _scrubber, _scrub_record
    _scrubber = RecordScrubber(config, salt)
    _scrub_record = scrub_record


def _peak_rss_mb() -> float:
    with contextlib.suppress(OSError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _scrubbed(
    scrubber: RecordScrubber, scrub_record: ScrubRecord, record: dict[str, Any], then: Then | None
) -> Scrubbed:
    clean, counts = scrub_record(scrubber, record)
    if then is not None:
        clean[THEN] = then(clean)
    return clean, counts


def _chunk(records: list[dict[str, Any]], then: Then | None = None) -> _Done:
    assert _scrubber is not None and _scrub_record is not None
    out = [
        (clean, dict(counts))
        for clean, counts in (_scrubbed(_scrubber, _scrub_record, r, then) for r in records)
    ]
    return out, os.getpid(), _peak_rss_mb()


class ScrubPool:
    """Scrubs records for one export, in ``workers`` processes when there are enough of them;
    ``peak_rss_mb`` holds each worker's peak memory once the export has run (for benchmarks)."""

    def __init__(
        self,
        scrubber: RecordScrubber,
        scrub_record: ScrubRecord,
        workers: int,
        pool_from: int = POOL_FROM,
    ) -> None:
        self.scrubber = scrubber
        self.scrub_record = scrub_record
        self.workers = workers
        self.pool_from = pool_from
        self.peak_rss_mb: dict[int, float] = {}

    def scrub_all(
        self, records: Iterable[dict[str, Any]], then: Then | None = None
    ) -> Iterator[Scrubbed]:
        """Each record scrubbed, in the order given; with ``then``, its result on the scrubbed
        record stored in it under :data:`THEN`, worked out in the same process."""
        records = iter(records)
        head = list(itertools.islice(records, self.pool_from))
        if self.workers < 1 or len(head) < self.pool_from:
            for record in itertools.chain(head, records):
                yield self._here(record, then)
            return
        for done in self._pooled(itertools.chain(head, records), then):
            yield from done

    def _here(self, record: dict[str, Any], then: Then | None) -> Scrubbed:
        return _scrubbed(self.scrubber, self.scrub_record, record, then)

    def _pooled(self, records: Iterator[dict[str, Any]], then: Then | None) -> Iterator[Scrubbed]:
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=mp.get_context("spawn"),
            initializer=_start,
            initargs=(self.scrubber.config, self.scrubber.pii.salt, self.scrub_record),
        )
        # A chunk leaves ``out`` only once its records are taken back, so none is lost.
        out: deque[tuple[Future[_Done], list[dict[str, Any]]]] = deque()
        unsent: list[dict[str, Any]] = []
        try:
            try:
                while chunk := list(itertools.islice(records, CHUNK)):
                    unsent = chunk
                    out.append((pool.submit(_chunk, chunk, then), chunk))
                    unsent = []
                    if len(out) > 2 * self.workers:
                        yield self._take(out[0][0])
                        out.popleft()
                while out:
                    yield self._take(out[0][0])
                    out.popleft()
            except BrokenProcessPool as exc:
                # A worker that died (killed, out of memory) or could not start (a script
                # without ``if __name__ == "__main__":`` run as the main module): the records
                # it held and the rest are scrubbed here, in order, so the export completes.
                log.warning("scrub workers stopped (%s); scrubbing in this process", exc)
                for _, chunk in out:
                    yield [self._here(r, then) for r in chunk]
                out.clear()
                for record in itertools.chain(unsent, records):
                    yield [self._here(record, then)]
        finally:
            for pending, _ in out:
                pending.cancel()
            pool.shutdown(wait=True, cancel_futures=True)

    def _take(self, future: Future[_Done]) -> list[Scrubbed]:
        done, pid, peak = future.result()
        self.peak_rss_mb[pid] = max(peak, self.peak_rss_mb.get(pid, 0.0))
        return done


def default_workers() -> int:
    """Worker processes an export scrubs in: one a core, at most 8 (the parent's own reading
    and writing caps what more would give); 0 on one core. The parent mostly waits on them:
    on 2 cores, 2 workers export ``bench datasets``' sessions fastest (docs/benchmarks.md)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 0 if (cores or 1) < 2 else min(8, cores or 1)


__all__ = ["CHUNK", "POOL_FROM", "THEN", "ScrubPool", "ScrubRecord", "Then", "default_workers"]
