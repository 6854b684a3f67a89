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

Memory stays flat in the number of records: groups are codes into one Arrow array of their
distinct names, components a union-find over those codes in numpy, the stored splits are
joined to the names inside DuckDB, and new groups are inserted from Arrow, so no Python
object is made per record or per group (a million sessions are a few arrays).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from model_foundry.lib.hygiene.dedup import UnionFind
from model_foundry.lib.tables.splits import DATASET_SPLIT_GROUPS

DEFAULT_RATIOS: Mapping[str, float] = {"train": 0.95, "test": 0.05}
MERGE_SIDE = "train"
_CHUNK = 65_536  # group names turned into Python strings at a time (to hash new ones)


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


@dataclass
class GroupSplits:
    """Each group's split (``split_of[code]`` indexes ``names``), and what was done."""

    split_of: npt.NDArray[np.int8]
    names: list[str]
    new_groups: int = 0
    merges: int = 0

    def of_records(self, group_at: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.int8]:
        return self.split_of[group_at]


def stored_splits(con: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, str]:
    rows = DATASET_SPLIT_GROUPS.rows(con, DATASET_SPLIT_GROUPS.select_sql("dataset = ?"), [dataset])
    return {r.group_id: r.split for r in rows}


def _roots(
    groups: int, group_at: npt.NDArray[np.int64], clusters: npt.NDArray[np.int64] | None
) -> npt.NDArray[np.int64]:
    """Each group's component: groups whose records share a cluster are one."""
    uf = UnionFind(groups)
    if clusters is not None and len(group_at):
        order = np.argsort(clusters, kind="stable")
        by_cluster, codes = clusters[order], group_at[order]
        starts = np.ones(len(order), dtype=bool)
        starts[1:] = by_cluster[1:] != by_cluster[:-1]
        anchors = codes[np.flatnonzero(starts)][np.cumsum(starts) - 1]
        linked = np.unique(np.stack([anchors, codes], axis=1)[anchors != codes], axis=0)
        for a, b in linked.tolist():  # only records near a record of another group
            uf.union(a, b)
    return uf.roots()


def _stored(
    con: duckdb.DuckDBPyConnection, dataset: str, names: pa.Array, ratios: Mapping[str, float]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8], list[str]]:
    """The stored groups among ``names``, joined inside DuckDB: their codes, their splits
    (indexes into the split names returned: the ratios' and any stored ones)."""
    known = con.execute(
        "SELECT DISTINCT split FROM dataset_split_groups WHERE dataset = ?", [dataset]
    )
    split_names = sorted({*ratios, *(r[0] for r in known.fetchall())})
    staged = pa.table({"code": pa.array(np.arange(len(names), dtype=np.int64)), "group_id": names})
    con.register("_groups_to_split", staged)
    try:
        found = con.execute(
            "SELECT g.code, list_position(?::VARCHAR[], s.split) - 1 AS side"
            " FROM _groups_to_split g JOIN dataset_split_groups s ON s.group_id = g.group_id"
            " WHERE s.dataset = ?",
            [split_names, dataset],
        ).fetchnumpy()
    finally:
        con.unregister("_groups_to_split")
    codes = np.asarray(found["code"], dtype=np.int64)
    return codes, np.asarray(found["side"], dtype=np.int8), split_names


def _smallest(names: pa.Array, roots: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Per component root, the code of its smallest group name (UTF-8 byte order is code
    point order, as Python compares strings)."""
    by_name = pc.array_sort_indices(names).to_numpy().astype(np.int64)
    rank = np.empty(len(names), dtype=np.int64)
    rank[by_name] = np.arange(len(names))
    best = np.full(len(names), len(names), dtype=np.int64)
    np.minimum.at(best, roots, rank)
    return by_name[np.minimum(best, len(names) - 1)]


def _hashed(
    dataset: str, names: pa.Array, codes: npt.NDArray[np.int64], ratios: Mapping[str, float]
) -> list[str]:
    out: list[str] = []
    for start in range(0, len(codes), _CHUNK):
        part = names.take(pa.array(codes[start : start + _CHUNK])).to_pylist()
        out += [hashed_split(dataset, g, ratios) for g in part]
    return out


def _insert(con: duckdb.DuckDBPyConnection, dataset: str, names: pa.Array,
            codes: npt.NDArray[np.int64], splits: npt.NDArray[np.int8],
            split_names: list[str]) -> None:  # fmt: skip
    sides = pa.array(split_names)
    for start in range(0, len(codes), _CHUNK):
        part = codes[start : start + _CHUNK]
        staged = pa.table({
            "dataset": pa.array([dataset] * len(part)),
            "group_id": names.take(pa.array(part)),
            "split": sides.take(pa.array(splits[part])),
        })  # fmt: skip
        con.register("_new_split_groups", staged)
        try:
            con.execute(
                "INSERT INTO dataset_split_groups BY NAME SELECT * FROM "
                "_new_split_groups ON CONFLICT DO NOTHING"
            )
        finally:
            con.unregister("_new_split_groups")


def assign_group_splits(
    con: duckdb.DuckDBPyConnection,
    dataset: str,
    names: pa.Array,
    group_at: npt.NDArray[np.integer[Any]],
    clusters: npt.NDArray[np.integer[Any]] | None = None,
    ratios: Mapping[str, float] = DEFAULT_RATIOS,
) -> GroupSplits:
    """Splits for the groups ``names`` (distinct), whose records are ``group_at`` (a code
    into ``names`` per record) in near-duplicate ``clusters`` (one per record; None: each
    group alone), storing the splits of new groups (see the module doc)."""
    count = len(names)
    codes = np.asarray(group_at, dtype=np.int64)
    linked = np.asarray(clusters, dtype=np.int64) if clusters is not None else None
    roots = _roots(count, codes, linked)
    stored_codes, stored_sides, split_names = _stored(con, dataset, names, ratios)
    index = {name: n for n, name in enumerate(split_names)}
    stored = np.full(count, -1, dtype=np.int8)
    stored[stored_codes] = stored_sides
    # A component's side: the one its stored groups share; the merge side when they differ.
    side = np.full(count, -1, dtype=np.int8)
    pairs = np.unique(np.stack([roots[stored_codes], stored[stored_codes]], axis=1), axis=0)
    comp, n_sides = np.unique(pairs[:, 0], return_counts=True)
    side[comp[n_sides == 1]] = pairs[np.isin(pairs[:, 0], comp[n_sides == 1]), 1]
    side[comp[n_sides > 1]] = index[MERGE_SIDE]
    # A component with no stored group: the hash of its smallest group name.
    fresh = np.flatnonzero((side == -1) & (roots == np.arange(count)))
    hashed = _hashed(dataset, names, _smallest(names, roots)[fresh], ratios)
    side[fresh] = np.array([index[s] for s in hashed], dtype=np.int8)
    split_of = np.where(stored >= 0, stored, side[roots]).astype(np.int8)
    new = np.flatnonzero(stored < 0)
    _insert(con, dataset, names, new, split_of, split_names)
    return GroupSplits(split_of, split_names, len(new), int((n_sides > 1).sum()))


def assign_splits(
    con: duckdb.DuckDBPyConnection,
    dataset: str,
    groups: Sequence[str],
    clusters: Sequence[Hashable] | None = None,
    ratios: Mapping[str, float] = DEFAULT_RATIOS,
) -> SplitAssignment:
    """:func:`assign_group_splits` for records given as lists: ``groups`` one name per
    record, ``clusters`` any hashable per record."""
    encoded = pa.array(list(groups), pa.string()).dictionary_encode()
    group_at = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    linked = None
    if clusters is not None:
        # Any hashable per record: numbered by first appearance.
        number: dict[Hashable, int] = {}
        linked = np.array([number.setdefault(c, len(number)) for c in clusters], dtype=np.int64)
    assigned = assign_group_splits(con, dataset, encoded.dictionary, group_at, linked, ratios)
    splits = [assigned.names[s] for s in assigned.of_records(group_at).tolist()]
    by_split: dict[str, int] = {}
    for s in splits:
        by_split[s] = by_split.get(s, 0) + 1
    return SplitAssignment(
        splits, assigned.new_groups, assigned.merges, dict(sorted(by_split.items()))
    )


__all__ = [
    "DEFAULT_RATIOS",
    "MERGE_SIDE",
    "GroupSplits",
    "SplitAssignment",
    "assign_group_splits",
    "assign_splits",
    "hashed_split",
    "stored_splits",
]
