"""Records -> what an export writes: scrubbed, flagged, deduplicated and split, with figures.

The order is fixed: every record is scrubbed first (secrets to typed markers, PII hashed), so
nothing later sees the raw text; then quality flags and the configured filters (each counted,
the record kept in ``samples.parquet`` with ``dropped_by``); then near-duplicate clusters over
each record's varying text, one record per cluster kept (the most turns, then the earliest,
then the smallest id); then each cluster's stored split. The hygiene itself (``lib/hygiene``)
comes in as a :class:`Hygiene`, so this bookkeeping is the same for every kind of record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# Filters a run may apply; the default for sessions drops only what has nothing to learn.
FILTERS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "no_assistant": lambda r: not any(m["role"] == "assistant" for m in r["messages"]),
    "empty": lambda r: r.get("empty_turns", 0) > 0 or bool(r.get("is_empty")),
    "truncated": lambda r: r.get("truncated_turns", 0) > 0 or bool(r.get("is_truncated")),
    "tool_errors": lambda r: r.get("tool_errors", 0) > 0,
}
SESSION_FILTERS = ("no_assistant", "truncated")
SAMPLE_FILTERS = ("empty", "truncated")


class Hygiene(Protocol):
    """What an export asks of the hygiene library."""

    def scrub(self, record: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, int]]:
        """A scrubbed copy of ``record`` and the markers written, by kind."""
        ...

    def clusters(self, texts: Sequence[str]) -> list[str]:
        """A cluster id per text: texts that are near duplicates share one."""
        ...

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


def _keep_order(record: dict[str, Any]) -> tuple[Any, ...]:
    return (-len(record["messages"]), record.get("first_at") or "", record["id"])


@dataclass
class Prepared:
    """Every record with ``cluster_id``, ``split``, ``kept`` and ``dropped_by``, and figures."""

    records: list[dict[str, Any]]
    redactions_by_kind: dict[str, int] = field(default_factory=dict)
    removed_by_filter: dict[str, int] = field(default_factory=dict)
    duplicates_removed: int = 0
    clusters: int = 0
    split_joins: int = 0


def prepare(
    records: Iterable[dict[str, Any]],
    hygiene: Hygiene,
    filters: Sequence[str] = SESSION_FILTERS,
    group_of: Callable[[dict[str, Any]], str] | None = None,
) -> Prepared:
    """Scrub, flag, cluster and split ``records`` (see the module docstring). ``group_of``
    gives a record's group when it is not its cluster (fan-out samples: the prompt's)."""
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise ValueError(f"unknown dataset filter(s) {unknown}: use {sorted(FILTERS)}")
    redactions: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    scrubbed = []
    for record in records:
        clean, counts = hygiene.scrub(record)
        redactions.update(counts)
        clean["dropped_by"] = next((f"filter:{f}" for f in filters if FILTERS[f](clean)), None)
        if clean["dropped_by"]:
            removed[clean["dropped_by"].removeprefix("filter:")] += 1
        scrubbed.append(clean)
    duplicates = 0
    if group_of is not None:
        for record in scrubbed:
            record["cluster_id"] = group_of(record)
    else:
        clusters = hygiene.clusters([varying_text(r) for r in scrubbed])
        members: dict[str, list[dict[str, Any]]] = {}
        for record, cluster in zip(scrubbed, clusters, strict=True):
            record["cluster_id"] = cluster
            if record["dropped_by"] is None:
                members.setdefault(cluster, []).append(record)
        for group in members.values():
            for extra in sorted(group, key=_keep_order)[1:]:
                extra["dropped_by"] = "duplicate"
                duplicates += 1
    split_of, joins = hygiene.splits(sorted({r["cluster_id"] for r in scrubbed}))
    for record in scrubbed:
        record["split"] = split_of[record["cluster_id"]]
        record["kept"] = record["dropped_by"] is None
    return Prepared(
        records=scrubbed,
        redactions_by_kind=dict(sorted(redactions.items())),
        removed_by_filter={f: removed.get(f, 0) for f in filters},
        duplicates_removed=duplicates,
        clusters=len({r["cluster_id"] for r in scrubbed}),
        split_joins=joins,
    )


__all__ = [
    "FILTERS",
    "SAMPLE_FILTERS",
    "SESSION_FILTERS",
    "Hygiene",
    "Prepared",
    "prepare",
    "varying_text",
]
