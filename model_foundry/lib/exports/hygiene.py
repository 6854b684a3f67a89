"""The hygiene an export runs, from ``lib/hygiene``: this installation's scrubber, MinHash
LSH near duplicates over spooled shingle sets, and the stored grouped splits of the DuckDB
file."""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from model_foundry.lib import settings, storage
from model_foundry.lib.exports.spool import HashSpool
from model_foundry.lib.exports.workers import ScrubPool, ScrubRecord, Then, default_workers
from model_foundry.lib.hygiene.dedup import DedupConfig, find_duplicate_sketches, text_sketch
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.hygiene.splits import assign_group_splits

# What a scrub reads of a record: the fields whose text came from people, models or tools.
_TEXT_FIELDS = ("thread", "tools", "prompt", "response", "reasoning", "params")
_MESSAGE_TEXT = ("content", "reasoning", "tool_calls", "name")


class SpooledClusters:
    """Each text's sketch (exact key and shingle set) made as it comes, the sets spooled to a
    temporary file; clustered when asked."""

    def __init__(self, config: DedupConfig | None = None) -> None:
        self.config = config or DedupConfig()
        self._dir = tempfile.TemporaryDirectory(prefix="model-foundry-dedup-")
        self.sets = HashSpool(Path(self._dir.name) / "shingles")
        self.exact = array("Q")
        self.priority = array("d")

    def add(self, text: str, priority: float) -> None:
        exact, shingles = text_sketch(text, self.config.ngram)
        self.sets.append(shingles)
        self.exact.append(exact)
        self.priority.append(priority)

    def clusters(self) -> npt.NDArray[np.int64]:
        self.sets.close_writes()
        try:
            exact = np.frombuffer(self.exact, dtype=np.uint64)
            found = find_duplicate_sketches(
                self.sets, exact, self.config, self.priority, Path(self._dir.name)
            )
        finally:
            self.sets.close()
            self._dir.cleanup()
        return found.cluster


def scrubbed_record(
    record: dict[str, Any],
    text: dict[str, Any],
    scrub: Callable[[Any], tuple[Any, Mapping[str, int]]],
) -> tuple[dict[str, Any], Mapping[str, int]]:
    """``record`` with ``text`` (some of its fields, and under ``messages`` the text of each
    message) scrubbed in one pass and put back; what was found, counted."""
    clean, counts = scrub(text)
    out = {**record, **{k: v for k, v in clean.items() if k != "messages"}}
    out["messages"] = [
        {**m, **c} for m, c in zip(record.get("messages") or [], clean["messages"], strict=True)
    ]
    return out, counts


def scrub_session_record(
    scrubber: RecordScrubber, record: dict[str, Any]
) -> tuple[dict[str, Any], Mapping[str, int]]:
    """The record with its text scrubbed: every field people or tools wrote (contents,
    reasoning, call arguments and names, the tools schema, the thread's name). Roles, ids,
    slots, models, times and counts are the pipeline's own and are left as they are:
    scrubbing them would cost most of the time and find nothing."""
    text = {key: record[key] for key in _TEXT_FIELDS if key in record}
    text["messages"] = [
        {key: m.get(key) for key in _MESSAGE_TEXT} for m in record.get("messages") or []
    ]
    return scrubbed_record(record, text, scrubber.scrub)


class ExportHygiene:
    """Hygiene for one dataset of one DuckDB file; records are scrubbed in ``workers``
    processes (``lib/exports/workers.py``; None: :func:`default_workers`)."""

    def __init__(
        self,
        db_path: Path,
        dataset: str,
        scrubber: RecordScrubber,
        test_share: float,
        workers: int | None = None,
    ) -> None:
        self.db_path = db_path
        self.dataset = dataset
        self.scrubber = scrubber
        self.ratios = {"train": 1 - test_share, "test": test_share}
        self.workers = default_workers() if workers is None else workers
        self.pools: list[ScrubPool] = []

    def scrub(self, record: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, int]]:
        return scrub_session_record(self.scrubber, record)

    def scrub_all(
        self,
        records: Iterable[dict[str, Any]],
        scrub_record: ScrubRecord = scrub_session_record,
        then: Then | None = None,
    ) -> Iterator[tuple[dict[str, Any], Mapping[str, int]]]:
        """Every record scrubbed by ``scrub_record``, in order, in the worker processes (with
        ``then``'s result on it under ``workers.THEN``)."""
        pool = ScrubPool(self.scrubber, scrub_record, self.workers)
        self.pools.append(pool)
        return pool.scrub_all(records, then)

    def scrub_value(self, value: Any) -> tuple[Any, Mapping[str, int]]:
        return self.scrubber.scrub(value)

    def worker_peak_rss_mb(self) -> float:
        """The scrub workers' peak memory added up (each worker's own peak), for benchmarks
        that report an export's memory: the parent's alone would leave the workers out."""
        peaks: dict[int, float] = {}
        for pool in self.pools:
            for pid, mb in pool.peak_rss_mb.items():
                peaks[pid] = max(mb, peaks.get(pid, 0.0))
        return round(sum(peaks.values()), 1)

    def cluster_index(self) -> SpooledClusters:
        return SpooledClusters()

    def splits(
        self,
        names: pa.Array,
        group_at: npt.NDArray[np.int64],
        clusters: npt.NDArray[np.int64] | None,
    ) -> tuple[npt.NDArray[np.int8], list[str], int]:
        # A short transaction of its own: new groups' splits are stored for good here.
        assigned = storage.run_in_transaction(
            self.db_path,
            lambda con: assign_group_splits(
                con, self.dataset, names, group_at, clusters, self.ratios
            ),
        )
        return assigned.of_records(group_at), assigned.names, assigned.merges


def export_hygiene(db_path: Path, dataset: str, test_share: float) -> ExportHygiene:
    """This installation's hygiene (its hygiene file and salt) for ``dataset``, with new
    groups sent to test at ``test_share``."""
    return ExportHygiene(
        db_path, dataset, RecordScrubber.from_settings(), test_share, settings.export_workers()
    )


__all__ = [
    "ExportHygiene",
    "SpooledClusters",
    "export_hygiene",
    "scrub_session_record",
    "scrubbed_record",
]
