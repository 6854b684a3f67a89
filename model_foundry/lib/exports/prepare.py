"""Records -> what an export writes: scrubbed, flagged, deduplicated and split, with figures.

The order is fixed: every record is scrubbed first (secrets to typed markers, PII hashed), so
nothing later sees the raw text; then quality flags and the configured filters (each counted,
the record kept in ``samples.parquet`` with ``dropped_by``) and, for model answers, the
quality gates (``lib/gates``: the cause in ``gate``, held back as ``gate:<cause>`` unless a
filter already dropped it); then the check of all its text against the lab's evaluation
sets (``lib/decontamination``, a batch of records at a time: held back as ``contaminated``
unless dropped already, the best match in ``contamination``); then near-duplicate clusters
over each record's varying text, one record per cluster kept (the most turns, then the earliest,
then the smallest id); then each cluster's stored split. The hygiene itself (``lib/hygiene``)
comes in as a :class:`Hygiene`, so this bookkeeping is the same for every kind of record.

Two passes keep memory flat: the first scrubs each record as it is read and spools it to a
Parquet file, keeping a byte per record (why it is dropped) and the cluster index's entry;
the second reads the spool back a batch at a time with each record's cluster and split.
A cluster is named by the id of the record it keeps.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from model_foundry.lib.decontamination.match import CAUSE as CONTAMINATED
from model_foundry.lib.decontamination.match import Decontaminator
from model_foundry.lib.exports.layouts import CONTAMINATION
from model_foundry.lib.exports.workers import THEN, Then

# Filters a run may apply; the default for sessions drops only what has nothing to learn.
FILTERS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "no_assistant": lambda r: not any(m["role"] == "assistant" for m in r["messages"]),
    "empty": lambda r: (r.get("empty_turns") or 0) > 0 or bool(r.get("is_empty")),
    "truncated": lambda r: (r.get("truncated_turns") or 0) > 0 or bool(r.get("is_truncated")),
    "tool_errors": lambda r: (r.get("tool_errors") or 0) > 0,
}
SESSION_FILTERS = ("no_assistant", "truncated")
SAMPLE_FILTERS = ("empty", "truncated")
_SPOOL_BATCH = 1000
_GROUP_CHUNK = 65_536
_FILTERED = 1e15
# Keys whose strings are the pipeline's own (ids, times, names of models and slots), not
# text anyone wrote: left out of what is checked against the eval sets.
_NOT_WRITTEN = frozenset(
    {
        "id", "correlation_id", "event_ids", "first_at", "last_at", "created_at", "models",
        "slots", "slot", "model", "role", "split", "cluster_id", "request_key", "prompt_id",
        "dataset", "version", "finish_reason", "tool_call_id", "type", "gate", "source",
        "contamination",
    }
)  # fmt: skip


class ClusterIndex(Protocol):
    """Near-duplicate clustering fed one record's text at a time (texts may be spooled)."""

    def add(self, text: str, priority: float) -> None: ...

    def clusters(self) -> npt.NDArray[np.int64]:
        """Per added text, the position of the one its cluster keeps: the lowest priority,
        then the first added."""
        ...


@dataclass(frozen=True)
class Gates:
    """The quality gates an export applies to model answers: ``check`` gives a record's
    cause among ``causes``, or None. With ``in_workers``, ``check`` (then picklable) runs in
    the scrub workers, right after each record's scrub: on short answers the gates cost as
    much as the scrub, and the parent alone would be what an export waits on."""

    causes: tuple[str, ...]
    check: Callable[[dict[str, Any]], str | None]
    in_workers: bool = False


class Hygiene(Protocol):
    """What an export asks of the hygiene library."""

    def scrub(self, record: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, int]]:
        """A scrubbed copy of ``record`` and the markers written, by kind."""
        ...

    def scrub_all(
        self, records: Iterable[dict[str, Any]], then: Then | None = None
    ) -> Iterator[tuple[dict[str, Any], Mapping[str, int]]]:
        """:meth:`scrub` of every record, in order (possibly in other processes); with
        ``then``, its result on the scrubbed record stored in it under ``THEN``."""
        ...

    def scrub_value(self, value: Any) -> tuple[Any, Mapping[str, int]]:
        """A scrubbed copy of any JSON-like ``value`` (every string in it) and the markers."""
        ...

    def cluster_index(self) -> ClusterIndex: ...

    def splits(
        self,
        names: pa.Array,
        group_at: npt.NDArray[np.int64],
        clusters: npt.NDArray[np.int64] | None,
    ) -> tuple[npt.NDArray[np.int8], list[str], int]:
        """Each record's split from its group's stored one, as an index into the split names
        also returned (groups linked by a near-duplicate cluster share a side; new groups are
        stored now), and how many joins of groups on different sides were sent to train.
        ``names`` are the distinct groups, ``group_at`` each record's code into them and
        ``clusters`` each record's near-duplicate cluster (None: no dedup)."""
        ...


def varying_text(record: dict[str, Any]) -> str:
    """What tells sessions apart: every turn but the system prompt, calls included."""
    parts = []
    for m in record["messages"]:
        if m["role"] == "system":
            continue
        parts.append(m.get("content") or "")
        parts += [
            f"{c['function']['name']}({c['function']['arguments']})"
            for c in m.get("tool_calls") or []
        ]
    return "\n".join(parts)


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, v in value.items():
            if key not in _NOT_WRITTEN:
                _strings(v, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _strings(v, out)


def written_text(record: dict[str, Any]) -> str:
    """Every text a record's views write (the pipeline's ids, times and names left out), one
    per line: what is checked against the eval sets."""
    out: list[str] = []
    _strings(record, out)
    return "\n".join(out)


def priority(record: dict[str, Any]) -> float:
    """Which record of a cluster is kept: the most turns, then the earliest (first event)."""
    first = record.get("first_at")
    when = datetime.fromisoformat(first).timestamp() if first else 0.0
    return -len(record["messages"]) * 1e10 + when


@dataclass
class Prepared:
    """The figures of a prepared export; :meth:`batches` gives its records."""

    spool: Path
    schema: pa.Schema
    records: int = 0
    redactions_by_kind: dict[str, int] = field(default_factory=dict)
    removed_by_filter: dict[str, int] = field(default_factory=dict)
    # Records per gate cause, whether or not a filter dropped them too (empty: no gates).
    held_back_by_gate: dict[str, int] = field(default_factory=dict)
    # The check against the eval sets (``Decontaminator.as_dict``); None: not checked.
    decontamination: dict[str, Any] | None = None
    duplicates_removed: int = 0
    clusters: int = 0
    split_joins: int = 0
    # Per record, by position in the spool: its cluster (index in ``cluster_names``), its
    # split (index in ``split_names``) and why it is not kept (index in ``reasons``; 0: kept).
    cluster_at: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    split_at: npt.NDArray[np.int8] = field(default_factory=lambda: np.empty(0, np.int8))
    dropped_at: npt.NDArray[np.int8] = field(default_factory=lambda: np.empty(0, np.int8))
    cluster_names: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))
    split_names: list[str] = field(default_factory=list)
    reasons: list[str | None] = field(default_factory=lambda: [None])

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        """The records in their order, each with ``cluster_id``, ``split``, ``kept`` and
        ``dropped_by``, a spool batch at a time."""
        if not self.records:
            return
        at = 0
        # pre_buffer off: with it, pyarrow keeps every row group it has read until the
        # reader closes, so its pool grows with the export's size instead of staying flat.
        spool = pq.ParquetFile(self.spool, pre_buffer=False)
        for batch in spool.iter_batches(batch_size=_SPOOL_BATCH):
            rows = batch.to_pylist()
            end = at + len(rows)
            clusters = self.cluster_names.take(pa.array(self.cluster_at[at:end])).to_pylist()
            splits, dropped = self.split_at[at:end].tolist(), self.dropped_at[at:end].tolist()
            for row, cluster, split, reason in zip(rows, clusters, splits, dropped, strict=True):
                row["cluster_id"] = cluster
                row["split"] = self.split_names[split]
                row["dropped_by"] = self.reasons[reason]
                row["kept"] = row["dropped_by"] is None
            at = end
            yield rows


class _Groups:
    """Each record's group, gathered into Arrow chunks as it comes: no Python string is kept
    per record, and a session's threads (or a prompt's samples) end up as one name."""

    def __init__(self) -> None:
        self._chunks: list[pa.Array] = []
        self._part: list[str] = []

    def append(self, name: str) -> None:
        self._part.append(name)
        if len(self._part) >= _GROUP_CHUNK:
            self._flush()

    def _flush(self) -> None:
        if self._part:
            self._chunks.append(pa.array(self._part, pa.large_string()))
            self._part = []

    def encoded(self) -> tuple[pa.Array, npt.NDArray[np.int64]]:
        """The distinct names in order of first appearance, and each record's code."""
        self._flush()
        every = pa.chunked_array(self._chunks, pa.large_string()).combine_chunks()
        self._chunks = []
        encoded = every.dictionary_encode()
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        return encoded.dictionary, codes


class _Pass:
    """The first pass: scrub, flag and spool each record, keeping only small arrays."""

    def __init__(
        self,
        prepared: Prepared,
        filters: Sequence[str],
        gates: Gates | None,
        text_of: Callable[[dict[str, Any]], str] = varying_text,
        decontamination: Decontaminator | None = None,
    ) -> None:
        self.prepared = prepared
        self.decontamination = decontamination
        self.text_of = text_of
        self.filters = filters
        self.gates = gates
        self.held_back: Counter[str] = Counter()
        self.redactions: Counter[str] = Counter()
        self.removed: Counter[str] = Counter()
        self.dropped = array("b")
        self.groups = _Groups()
        self.schema = pa.schema(
            [
                *(f for f in prepared.schema if f.name not in ("cluster_id", "split")),
                pa.field("contamination", CONTAMINATION),
            ]
        )
        causes = gates.causes if gates else ()
        reasons = [*(f"filter:{f}" for f in filters), *(f"gate:{c}" for c in causes)]
        if decontamination is not None:
            reasons.append(CONTAMINATED)
        self.reason_index = {r: n + 2 for n, r in enumerate(reasons)}
        prepared.reasons = [None, "duplicate", *self.reason_index]

    def run(
        self,
        records: Iterable[dict[str, Any]],
        hygiene: Hygiene,
        index: ClusterIndex | None,
        group_of: Callable[[dict[str, Any]], str],
    ) -> None:
        with pq.ParquetWriter(self.prepared.spool, self.schema) as spool:
            batch: list[tuple[dict[str, Any], str | None]] = []
            gates = self.gates
            then = gates.check if gates is not None and gates.in_workers else None
            for clean, counts in hygiene.scrub_all(records, then=then):
                self.redactions.update(counts)
                reason = next((f for f in self.filters if FILTERS[f](clean)), None)
                if reason:
                    self.removed[reason] += 1
                dropped = f"filter:{reason}" if reason else None
                if gates is not None:
                    cause = clean.pop(THEN) if then is not None else gates.check(clean)
                    clean["gate"] = cause
                    if cause:
                        self.held_back[cause] += 1
                        dropped = dropped or f"gate:{cause}"
                batch.append((clean, dropped))
                if len(batch) >= _SPOOL_BATCH:
                    self._flush(batch, spool, index, group_of)
                    batch = []
            if batch:
                self._flush(batch, spool, index, group_of)
        p = self.prepared
        p.records = len(self.dropped)
        p.redactions_by_kind = dict(sorted(self.redactions.items()))
        p.removed_by_filter = {f: self.removed.get(f, 0) for f in self.filters}
        if self.gates is not None:
            p.held_back_by_gate = {c: self.held_back.get(c, 0) for c in self.gates.causes}
        p.dropped_at = np.frombuffer(self.dropped, dtype=np.int8).copy()
        if self.decontamination is not None:
            p.decontamination = self.decontamination.as_dict()

    def _flush(
        self,
        batch: list[tuple[dict[str, Any], str | None]],
        spool: pq.ParquetWriter,
        index: ClusterIndex | None,
        group_of: Callable[[dict[str, Any]], str],
    ) -> None:
        """Check a batch against the eval sets (one lookup for all of it), then record and
        spool each record in order."""
        matches = (
            self.decontamination.check([written_text(clean) for clean, _ in batch])
            if self.decontamination is not None
            else [None] * len(batch)
        )
        threshold = self.decontamination.threshold if self.decontamination else 2.0
        rows = []
        for (clean, dropped), match in zip(batch, matches, strict=True):
            clean["contamination"] = match.as_dict() if match is not None else None
            if match is not None and match.score >= threshold:
                dropped = dropped or CONTAMINATED
            self.dropped.append(self.reason_index[dropped] if dropped else 0)
            if index is not None:
                # A record not kept is kept by its cluster only when all of it is.
                held = _FILTERED if dropped else 0
                index.add(self.text_of(clean), priority(clean) + held)
            self.groups.append(group_of(clean))
            rows.append(clean)
        spool.write_table(pa.Table.from_pylist(rows, schema=self.schema))


def _name_clusters(prepared: Prepared, kept_at: npt.NDArray[np.int64]) -> None:
    """Clusters named by the id of the record each keeps (stable while that record is kept);
    every other unfiltered member is a duplicate."""
    reps = np.unique(kept_at)
    ids = pq.read_table(prepared.spool, columns=["id"]).column("id")
    prepared.cluster_names = ids.take(pa.array(reps)).combine_chunks()
    prepared.cluster_at = np.searchsorted(reps, kept_at).astype(np.int64)
    duplicate = (kept_at != np.arange(len(kept_at))) & (prepared.dropped_at == 0)
    prepared.dropped_at[duplicate] = 1
    prepared.duplicates_removed = int(duplicate.sum())


def prepare(
    records: Iterable[dict[str, Any]],
    hygiene: Hygiene,
    spool: Path,
    schema: pa.Schema,
    *,
    group_of: Callable[[dict[str, Any]], str],
    deduplicate: bool = True,
    filters: Sequence[str] = SESSION_FILTERS,
    gates: Gates | None = None,
    text_of: Callable[[dict[str, Any]], str] = varying_text,
    decontamination: Decontaminator | None = None,
) -> Prepared:
    """Scrub, flag, cluster and split ``records`` (see the module docstring), spooling them to
    ``spool`` with ``schema``. ``group_of`` is a record's split group (a session; a prompt);
    with ``deduplicate`` false (fan-out samples, whose near-duplicate prompts were asked
    once) the group is also the exported cluster. ``text_of`` is what near duplicates are
    compared on (default: the turns, :func:`varying_text`); ``decontamination`` checks every
    record's text against the eval sets (None: not checked)."""
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise ValueError(f"unknown dataset filter(s) {unknown}: use {sorted(FILTERS)}")
    prepared = Prepared(spool, schema)
    index = hygiene.cluster_index() if deduplicate else None
    first = _Pass(prepared, filters, gates, text_of, decontamination)
    first.run(records, hygiene, index, group_of)
    names, group_at = first.groups.encoded()
    kept_at = None
    if index is not None:
        kept_at = np.asarray(index.clusters(), dtype=np.int64)
        _name_clusters(prepared, kept_at)
    else:
        prepared.cluster_names, prepared.cluster_at = names, group_at
    # The clusters link groups: a near duplicate of a train record never lands in test.
    split_at, split_names, prepared.split_joins = hygiene.splits(names, group_at, kept_at)
    prepared.split_at, prepared.split_names = split_at, split_names
    prepared.clusters = len(prepared.cluster_names)
    return prepared


__all__ = [
    "FILTERS",
    "SAMPLE_FILTERS",
    "SESSION_FILTERS",
    "ClusterIndex",
    "Gates",
    "Hygiene",
    "Prepared",
    "prepare",
    "priority",
    "varying_text",
    "written_text",
]
