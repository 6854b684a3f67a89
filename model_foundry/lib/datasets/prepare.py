"""Records -> what an export writes: scrubbed, flagged, deduplicated and split, with figures.

The order is fixed: every record is scrubbed first (secrets to typed markers, PII hashed), so
nothing later sees the raw text; then quality flags and the configured filters (each counted,
the record kept in ``samples.parquet`` with ``dropped_by``); then near-duplicate clusters over
each record's varying text, one record per cluster kept (the most turns, then the earliest,
then the smallest id); then each cluster's stored split. The hygiene itself (``lib/hygiene``)
comes in as a :class:`Hygiene`, so this bookkeeping is the same for every kind of record.

Two passes keep memory flat: the first scrubs each record as it is read and spools it to a
Parquet file, keeping only its id, length, time and flags (and the cluster index's entry);
the second reads the spool back a batch at a time with each record's cluster and split.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

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


class ClusterIndex(Protocol):
    """Near-duplicate clustering fed one record at a time."""

    def add(self, key: str, text: str) -> None: ...

    def clusters(self) -> Mapping[str, str]:
        """Every added key's cluster id: near duplicates share one."""
        ...


class Hygiene(Protocol):
    """What an export asks of the hygiene library."""

    def scrub(self, record: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, int]]:
        """A scrubbed copy of ``record`` and the markers written, by kind."""
        ...

    def cluster_index(self) -> ClusterIndex: ...

    def splits(self, groups: Sequence[str]) -> tuple[dict[str, str], int]:
        """Each group's stored split (new groups get theirs now), and how many groups that
        joined across splits were sent to train."""
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


@dataclass(frozen=True)
class _Seen:
    """What the second pass needs of a record: no text."""

    id: str
    turns: int
    first_at: str
    dropped_by: str | None
    group: str | None


@dataclass
class Prepared:
    """The figures of a prepared export; :meth:`batches` gives its records."""

    spool: Path
    schema: pa.Schema
    decided: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    records: int = 0
    redactions_by_kind: dict[str, int] = field(default_factory=dict)
    removed_by_filter: dict[str, int] = field(default_factory=dict)
    duplicates_removed: int = 0
    clusters: int = 0
    split_joins: int = 0

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        """The records in their order, each with ``cluster_id``, ``split``, ``kept`` and
        ``dropped_by``, a spool batch at a time."""
        if not self.records:
            return
        for batch in pq.ParquetFile(self.spool).iter_batches(batch_size=_SPOOL_BATCH):
            rows = batch.to_pylist()
            for row in rows:
                row["cluster_id"], row["split"], row["dropped_by"] = self.decided[row["id"]]
                row["kept"] = row["dropped_by"] is None
            yield rows


def _scrub_pass(
    records: Iterable[dict[str, Any]],
    hygiene: Hygiene,
    filters: Sequence[str],
    group_of: Callable[[dict[str, Any]], str] | None,
    prepared: Prepared,
    index: ClusterIndex | None,
) -> list[_Seen]:
    redactions: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    seen: list[_Seen] = []
    spool_schema = pa.schema([f for f in prepared.schema if f.name not in ("cluster_id", "split")])
    with pq.ParquetWriter(prepared.spool, spool_schema) as spool:
        batch: list[dict[str, Any]] = []
        for record in records:
            clean, counts = hygiene.scrub(record)
            redactions.update(counts)
            dropped = next((f"filter:{f}" for f in filters if FILTERS[f](clean)), None)
            if dropped:
                removed[dropped.removeprefix("filter:")] += 1
            if index is not None:
                index.add(clean["id"], varying_text(clean))
            group = group_of(clean) if group_of else None
            seen.append(
                _Seen(
                    clean["id"], len(clean["messages"]), clean.get("first_at") or "", dropped, group
                )
            )
            batch.append(clean)
            if len(batch) >= _SPOOL_BATCH:
                spool.write_table(pa.Table.from_pylist(batch, schema=spool_schema))
                batch = []
        if batch:
            spool.write_table(pa.Table.from_pylist(batch, schema=spool_schema))
    prepared.records = len(seen)
    prepared.redactions_by_kind = dict(sorted(redactions.items()))
    prepared.removed_by_filter = {f: removed.get(f, 0) for f in filters}
    return seen


def prepare(
    records: Iterable[dict[str, Any]],
    hygiene: Hygiene,
    spool: Path,
    schema: pa.Schema,
    filters: Sequence[str] = SESSION_FILTERS,
    group_of: Callable[[dict[str, Any]], str] | None = None,
) -> Prepared:
    """Scrub, flag, cluster and split ``records`` (see the module docstring), spooling them to
    ``spool`` with ``schema``. ``group_of`` gives a record's group when it is not its
    near-duplicate cluster (fan-out samples: the prompt's, already deduplicated when asked)."""
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise ValueError(f"unknown dataset filter(s) {unknown}: use {sorted(FILTERS)}")
    prepared = Prepared(spool, schema)
    index = hygiene.cluster_index() if group_of is None else None
    seen = _scrub_pass(records, hygiene, filters, group_of, prepared, index)
    cluster_of = dict(index.clusters()) if index is not None else {}
    group = {s.id: s.group if s.group is not None else cluster_of[s.id] for s in seen}
    dropped = {s.id: s.dropped_by for s in seen}
    if index is not None:
        best: dict[str, _Seen] = {}
        for s in seen:
            if s.dropped_by is not None:
                continue
            g = group[s.id]
            if g not in best or (-s.turns, s.first_at, s.id) < (
                -best[g].turns,
                best[g].first_at,
                best[g].id,
            ):
                best[g] = s
        keep = {s.id for s in best.values()}
        for s in seen:
            if s.dropped_by is None and s.id not in keep:
                dropped[s.id] = "duplicate"
                prepared.duplicates_removed += 1
    split_of, prepared.split_joins = hygiene.splits(sorted(set(group.values())))
    prepared.decided = {s.id: (group[s.id], split_of[group[s.id]], dropped[s.id]) for s in seen}
    prepared.clusters = len(set(group.values()))
    return prepared


__all__ = [
    "FILTERS",
    "SAMPLE_FILTERS",
    "SESSION_FILTERS",
    "ClusterIndex",
    "Hygiene",
    "Prepared",
    "prepare",
    "varying_text",
]
