"""Exact and near duplicates among records' texts: MinHash LSH, every candidate verified.

1. A text is lower-cased and split into words, each word hashed once by rensa. Texts with
   the same words are exact duplicates (a 64-bit digest of the word hashes each) and only
   the first of them goes on.
2. Shingles are word 3-grams: the three words' hashes folded into one uint64 in numpy (odd
   multipliers, then splitmix64's finaliser), so no shingle string is ever built. A text's
   *sketch* is its exact key and its sorted shingle set, made once per text
   (:func:`text_sketch`); an export spools the sets, not the texts. Shingles found in more
   than ``common_share`` of a seeded sample of the texts are dropped: a system prompt, a
   tool schema or a template that many records share is not what makes two records alike.
   (The export also leaves the system turn and the ``tools`` out of the text it passes
   here.)
3. rensa's MinHash gives ``bands * rows`` values per text; each band of ``rows`` values is
   folded into one uint64. Only these band keys are kept: ``bands * 8`` bytes per text in a
   numpy array, no Python object per record; an export keeps them on disk, one file per
   band, and searches a band at a time (:class:`BandKeys`), so it holds 8 bytes a text.
4. Texts sharing a key in any band are candidates (in a band's bucket each text meets the
   next ``max_bucket`` texts in index order, so a huge bucket stays linear). Every candidate
   pair's Jaccard similarity is computed on the two texts' actual shingle sets, and pairs at
   or above ``threshold`` are joined by union-find.
5. Each cluster keeps one record: the one with the lowest ``priority`` (the caller's order,
   e.g. most turns first), then the lowest index; its index is the cluster's id.

The LSH layout is a crossover, not a cutoff: a pair of similarity ``s`` becomes a candidate
with probability ``1 - (1 - s**rows)**bands``. The defaults (25 bands of 5 rows, verified at
0.75) were chosen from the measurement in ``measure.py`` (numbers in docs/hygiene.md): the
crossover sits near 0.53, so pairs at 0.75 and up are found all but surely and the verification,
not the sketch, decides.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
from rensa import RMinHash

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class DedupConfig:
    """How near duplicates are found (defaults measured, see the module doc)."""

    threshold: float = 0.75
    bands: int = 25
    rows: int = 5
    ngram: int = 3
    common_share: float = 0.05
    sample_size: int = 20_000
    max_bucket: int = 64
    seed: int = 17
    chunk: int = 4096

    @property
    def num_perm(self) -> int:
        return self.bands * self.rows

    def candidate_probability(self, similarity: float) -> float:
        """The chance that a pair of this true similarity becomes a candidate."""
        return float(1 - (1 - similarity**self.rows) ** self.bands)


@dataclass
class DedupResult:
    """Per text: its cluster (the index of the record the cluster keeps) and whether it is
    that record; and what the search did."""

    cluster: I64
    keep: npt.NDArray[np.bool_]
    exact_duplicates: int = 0
    candidate_pairs: int = 0
    verified_pairs: int = 0
    common_shingles: int = 0
    band_bytes: int = 0
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def clusters(self) -> int:
        return int(np.unique(self.cluster).size)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@functools.cache
def _fold(ngram: int) -> U64:
    """The odd multipliers that fold ``ngram`` word hashes into one shingle hash."""
    rng = np.random.default_rng(0x5EED + ngram)
    return rng.integers(1, 2**63, size=ngram, dtype=np.uint64) | np.uint64(1)


def _mix(x: U64) -> U64:
    """splitmix64's finaliser, in place: every input bit reaches every output bit."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def text_sketch(text: str, ngram: int = 3) -> tuple[int, U64]:
    """What dedup needs of a text: its exact key (same words, same key) and its sorted set of
    word ``ngram`` shingle hashes (a text shorter than ``ngram`` words is one shingle)."""
    tokens = words(text)
    if not tokens:
        return _EMPTY_KEY, np.empty(0, dtype=np.uint64)
    hashed = np.asarray(RMinHash.hash_token_sets([tokens])[0], dtype=np.uint64)
    exact = int.from_bytes(hashlib.blake2b(hashed.tobytes(), digest_size=8).digest(), "little")
    width = min(ngram, len(hashed))
    count = len(hashed) - width + 1
    fold = _fold(ngram)
    with np.errstate(over="ignore"):
        shingles = hashed[:count] * fold[0]
        for k in range(1, width):
            shingles += hashed[k : k + count] * fold[k]
        return exact, np.unique(_mix(shingles))


_EMPTY_KEY = int.from_bytes(hashlib.blake2b(b"", digest_size=8).digest(), "little")


class _Shingler:
    """Texts' shingle sets, without the shingles common to many of them."""

    def __init__(self, sets: Sequence[U64], config: DedupConfig) -> None:
        self.sets = sets
        self.config = config
        self.common: U64 = np.empty(0, dtype=np.uint64)

    def hashes(self, index: int) -> U64:
        unique = self.sets[index]
        if not self.common.size:
            return unique
        return unique[~np.isin(unique, self.common, assume_unique=True)]

    def learn_common(self, indexes: I64) -> None:
        rng = np.random.default_rng(self.config.seed)
        take = min(len(indexes), self.config.sample_size)
        sample = rng.choice(indexes, size=take, replace=False) if take < len(indexes) else indexes
        if take < 20:
            return
        seen = np.concatenate([self.sets[int(i)] for i in sample] or [np.empty(0, np.uint64)])
        values, df = np.unique(seen, return_counts=True)
        self.common = values[df > max(2, self.config.common_share * take)]


def _band_keys(signatures: npt.NDArray[np.uint32], config: DedupConfig) -> U64:
    """Fold each band of ``rows`` MinHash values into one uint64 (an odd-multiplier mix)."""
    rng = np.random.default_rng(config.seed)
    mult = rng.integers(1, 2**63, size=config.rows, dtype=np.uint64) | np.uint64(1)
    bands = signatures.astype(np.uint64).reshape(len(signatures), config.bands, config.rows)
    with np.errstate(over="ignore"):
        mixed = (bands * mult).sum(axis=2, dtype=np.uint64)
        mixed ^= mixed >> np.uint64(29)
    return mixed


class BandKeys:
    """The band keys of every representative, read a band at a time: in one array, or (given
    a ``folder``) in one file per band, appended a chunk of rows at a time, so the candidate
    search holds one band's column (8 bytes a record), not all ``bands`` of them."""

    def __init__(self, records: int, bands: int, folder: Path | None = None) -> None:
        self.records = records
        self.bands = bands
        self.folder = folder
        self._keys = None if folder else np.zeros((records, bands), dtype=np.uint64)

    @property
    def nbytes(self) -> int:
        return self.records * self.bands * 8

    def write(self, start: int, keys: U64) -> None:
        if self._keys is not None:
            self._keys[start : start + len(keys)] = keys
            return
        assert self.folder is not None
        for b in range(self.bands):
            with (self.folder / f"band-{b}.u64").open("ab") as out:
                out.write(np.ascontiguousarray(keys[:, b]).tobytes())

    def column(self, band: int) -> U64:
        if self._keys is not None:
            return self._keys[:, band]
        assert self.folder is not None
        return np.fromfile(self.folder / f"band-{band}.u64", dtype=np.uint64)


def signatures_to_bands(
    shingler: _Shingler, reps: I64, config: DedupConfig, folder: Path | None = None
) -> tuple[BandKeys, npt.NDArray[np.bool_]]:
    """Band keys of every representative (rows of texts with no shingle left are masked)."""
    bands = BandKeys(len(reps), config.bands, folder)
    usable = np.zeros(len(reps), dtype=bool)
    for start in range(0, len(reps), config.chunk):
        part = reps[start : start + config.chunk]
        sets = [shingler.hashes(int(i)) for i in part]
        lengths = np.array([len(s) for s in sets], dtype=np.uint64)
        usable[start : start + len(part)] = lengths > 0
        flat = np.concatenate(sets) if sets else np.empty(0, np.uint64)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint64)
        matrix = RMinHash.digest_matrix_from_flat_token_hashes(
            flat, offsets, config.num_perm, config.seed
        )
        rows = np.asarray(matrix.to_rows(), dtype=np.uint32).reshape(len(part), config.num_perm)
        bands.write(start, _band_keys(rows, config))
    return bands, usable


def candidate_pairs(bands: U64 | BandKeys, usable: npt.NDArray[np.bool_], max_bucket: int) -> I64:
    """Pairs ``(i, j)``, ``i < j``, sharing a band key, as one int64 ``i * n + j`` each."""
    n = len(usable)
    found: list[I64] = []
    live = np.flatnonzero(usable)
    count = bands.bands if isinstance(bands, BandKeys) else bands.shape[1]
    for b in range(count):
        whole = bands.column(b) if isinstance(bands, BandKeys) else bands[:, b]
        column = whole[live]
        del whole
        order = np.argsort(column, kind="stable")
        ordered, ids = column[order], live[order]
        for step in range(1, max_bucket + 1):
            same = np.flatnonzero(ordered[step:] == ordered[:-step])
            if same.size == 0:
                break
            lo = np.minimum(ids[same], ids[same + step]).astype(np.int64)
            hi = np.maximum(ids[same], ids[same + step]).astype(np.int64)
            found.append(lo * n + hi)
    return np.unique(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)


class UnionFind:
    """Disjoint sets over ``0..n-1`` in one int64 array."""

    def __init__(self, n: int) -> None:
        self.parent = np.arange(n, dtype=np.int64)

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def roots(self) -> I64:
        """Every element's root, by pointer jumping in numpy (a root is its own parent)."""
        roots = self.parent.copy()
        while True:
            jumped = roots[roots]
            if np.array_equal(jumped, roots):
                return roots
            roots = jumped


def jaccard(a: U64, b: U64) -> float:
    if a.size == 0 and b.size == 0:
        return 1.0
    inter = np.intersect1d(a, b, assume_unique=True).size
    return inter / (a.size + b.size - inter)


def _verify(pairs: I64, reps: I64, shingler: _Shingler, uf: UnionFind, threshold: float) -> int:
    n = len(reps)
    cache: dict[int, U64] = {}
    joined = 0
    for key in pairs.tolist():
        i, j = divmod(key, n)
        if uf.find(i) == uf.find(j):
            continue
        for k in (i, j):
            if k not in cache:
                cache[k] = shingler.hashes(int(reps[k]))
        if jaccard(cache[i], cache[j]) >= threshold:
            uf.union(i, j)
            joined += 1
    return joined


def _kept(roots: I64, priority: npt.NDArray[np.float64]) -> I64:
    """For each text, the index of the record its cluster keeps."""
    order = np.lexsort((np.arange(len(roots)), priority, roots))
    first = np.ones(len(order), dtype=bool)
    first[1:] = roots[order][1:] != roots[order][:-1]
    keeper_of_root = np.empty(len(roots), dtype=np.int64)
    keeper_of_root[roots[order][first]] = order[first]
    return keeper_of_root[roots]


def find_duplicates(
    texts: Sequence[str],
    config: DedupConfig | None = None,
    priority: Sequence[float] | None = None,
) -> DedupResult:
    """Cluster ``texts`` into exact and near duplicates (see the module doc)."""
    config = config or DedupConfig()
    sketches = [text_sketch(t, config.ngram) for t in texts]
    exact = np.array([k for k, _ in sketches], dtype=np.uint64)
    return find_duplicate_sketches([s for _, s in sketches], exact, config, priority)


def find_duplicate_sketches(
    sets: Sequence[U64],
    exact: U64,
    config: DedupConfig | None = None,
    priority: Sequence[float] | None = None,
    folder: Path | None = None,
) -> DedupResult:
    """:func:`find_duplicates` over texts' sketches (:func:`text_sketch`): ``sets[i]`` the
    sorted shingle set of text ``i`` and ``exact[i]`` its exact key. ``sets`` is read by
    position (a spool on disk will do); with a ``folder`` the band keys are kept there, one
    file per band, instead of in memory."""
    config = config or DedupConfig()
    n = len(exact)
    if n == 0:
        return DedupResult(np.empty(0, np.int64), np.empty(0, bool))
    _, first_of, group = np.unique(exact, return_index=True, return_inverse=True)
    reps = np.sort(first_of).astype(np.int64)
    rep_of_group = np.empty(len(first_of), dtype=np.int64)
    rep_of_group[np.argsort(first_of)] = np.arange(len(first_of))
    shingler = _Shingler(sets, config)
    shingler.learn_common(reps)
    bands, usable = signatures_to_bands(shingler, reps, config, folder)
    pairs = candidate_pairs(bands, usable, config.max_bucket)
    uf = UnionFind(len(reps))
    verified = _verify(pairs, reps, shingler, uf, config.threshold)
    rep_roots = reps[uf.roots()]
    roots = rep_roots[rep_of_group[group.reshape(-1)]]
    weights = np.asarray(priority if priority is not None else np.zeros(n), dtype=np.float64)
    cluster = _kept(roots, weights)
    return DedupResult(
        cluster=cluster,
        keep=cluster == np.arange(n),
        exact_duplicates=n - len(reps),
        candidate_pairs=int(pairs.size),
        verified_pairs=verified,
        common_shingles=int(shingler.common.size),
        band_bytes=int(bands.nbytes),
    )


__all__ = [
    "BandKeys",
    "DedupConfig",
    "DedupResult",
    "UnionFind",
    "candidate_pairs",
    "find_duplicate_sketches",
    "find_duplicates",
    "jaccard",
    "signatures_to_bands",
    "text_sketch",
    "words",
]
