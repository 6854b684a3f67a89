"""Grouped, stable splits: a group's split is chosen once, stored, and never changes.

Each record belongs to a group (a session, a prompt) and to a near-duplicate cluster
(``dedup.find_duplicates``). Groups linked by a cluster are one *component*, so near
duplicates never straddle train and test. For each component:

- no group stored yet: the component's split comes from a stable hash (BLAKE2b of the
  dataset and the component's smallest group id, mapped onto the ratios, default 95/5), and
  every group in it is stored with that split;
- stored groups all on one side: new groups join that side;
- stored groups on different sides (new records made near duplicates of both): the stored
  groups keep their splits, the new groups go to ``train``, and the merge is counted.

So a record always takes its group's stored split, an append never moves a record, and the
test split holds no near duplicate of a train record except across a counted merge.
Assignments live in ``dataset_split_groups`` (``lib/tables/splits.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import duckdb

from model_foundry.lib.hygiene.dedup import UnionFind
from model_foundry.lib.tables.splits import DATASET_SPLIT_GROUPS, SplitGroupRow

DEFAULT_RATIOS: Mapping[str, float] = {"train": 0.95, "test": 0.05}
MERGE_SIDE = "train"


def hashed_split(dataset: str, group: str, ratios: Mapping[str, float] = DEFAULT_RATIOS) -> str:
    """The split a stable hash gives ``group``: the same on every machine and run."""
    digest = hashlib.blake2b(f"{dataset}\x00{group}".encode(), digest_size=8).digest()
    point = int.from_bytes(digest, "big") / 2**64 * sum(ratios.values())
    total = 0.0
    for name, share in ratios.items():
        total += share
        if point < total:
            return name
    return next(reversed(list(ratios)))


@dataclass
class SplitAssignment:
    """Each record's split, and what the assignment did."""

    splits: list[str]
    new_groups: int = 0
    merges: int = 0
    by_split: dict[str, int] = field(default_factory=dict)


def stored_splits(con: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, str]:
    rows = DATASET_SPLIT_GROUPS.rows(con, DATASET_SPLIT_GROUPS.select_sql("dataset = ?"), [dataset])
    return {r.group_id: r.split for r in rows}


def _components(groups: Sequence[str], clusters: Sequence[Hashable]) -> dict[str, int]:
    names = sorted(set(groups))
    index = {g: i for i, g in enumerate(names)}
    uf = UnionFind(len(names))
    first_group: dict[Hashable, str] = {}
    for group, cluster in zip(groups, clusters, strict=True):
        anchor = first_group.setdefault(cluster, group)
        uf.union(index[anchor], index[group])
    return {g: uf.find(index[g]) for g in names}


def assign_splits(
    con: duckdb.DuckDBPyConnection,
    dataset: str,
    groups: Sequence[str],
    clusters: Sequence[Hashable] | None = None,
    ratios: Mapping[str, float] = DEFAULT_RATIOS,
) -> SplitAssignment:
    """Splits for records with these ``groups`` (and near-duplicate ``clusters``, one per
    record; None: each group alone), storing the splits of new groups (see the module doc)."""
    stored = stored_splits(con, dataset)
    component = _components(groups, clusters if clusters is not None else groups)
    members: dict[int, list[str]] = {}
    for group, comp in component.items():
        members.setdefault(comp, []).append(group)
    chosen: dict[str, str] = {}
    merges = 0
    for names in members.values():
        sides = {stored[g] for g in names if g in stored}
        if not sides:
            side = hashed_split(dataset, min(names), ratios)
        elif len(sides) == 1:
            side = next(iter(sides))
        else:
            side = MERGE_SIDE
            merges += 1
        chosen.update({g: side for g in names if g not in stored})
    DATASET_SPLIT_GROUPS.insert(
        con, [SplitGroupRow(dataset, g, s) for g, s in sorted(chosen.items())], "nothing"
    )
    split_of = {**chosen, **stored}
    splits = [split_of[g] for g in groups]
    by_split: dict[str, int] = {}
    for s in splits:
        by_split[s] = by_split.get(s, 0) + 1
    return SplitAssignment(splits, len(chosen), merges, dict(sorted(by_split.items())))


__all__ = [
    "DEFAULT_RATIOS",
    "MERGE_SIDE",
    "SplitAssignment",
    "assign_splits",
    "hashed_split",
    "stored_splits",
]
