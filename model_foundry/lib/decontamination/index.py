"""An eval set's n-gram index: built once per eval file version, kept on disk, loaded whole.

Each item's text fields are tokenised (``ngrams.py``) and laid end to end; its entries are
its distinct n-gram hashes, each tagged with the field it lies in (-1: it spans two). An
item shorter than n tokens has one entry: the hash of all its tokens, matched whole. The
entries of every item are sorted by hash, so a batch of rows is looked up with one
``searchsorted``; the index holds 13 bytes an entry (hash, item, field) and each item's
counts, nothing per token.

The file is ``<data dir>/decontamination/<set>-<key>.npz``, the key a hash of the eval
file's path, size and modification time (every file's, for a ``save_to_disk`` folder), the
fields and n: a changed file or setting builds a new index, an unchanged one is reused by
every later export. It is written beside its place and renamed, so a reader never sees half.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from model_foundry.lib.decontamination import loaders
from model_foundry.lib.decontamination.config import EvalSet
from model_foundry.lib.decontamination.ngrams import (
    batch_windows,
    token_hashes,
    tokens,
    window_hashes,
)

FORMAT = 1
_BATCH = 2048


@dataclass
class Index:
    """One eval set's entries (sorted by ``keys``) and items."""

    name: str
    ngram: int
    keys: npt.NDArray[np.uint64]
    entry_item: npt.NDArray[np.int32]
    entry_field: npt.NDArray[np.int8]
    item_ids: npt.NDArray[np.str_]
    # Per item: its distinct entries, and per text field those inside the field.
    item_total: npt.NDArray[np.int32]
    field_total: npt.NDArray[np.int32]
    # The token counts of items shorter than n (matched whole), so rows hash those windows too.
    short_lengths: tuple[int, ...]

    @property
    def items(self) -> int:
        return len(self.item_ids)

    @functools.cached_property
    def _filter(self) -> tuple[npt.NDArray[np.uint8], np.uint64]:
        """A bit per slot of a table 16 times the keys' count, set where a key's low bits
        fall: a window whose bit is clear is in no item. Most of a row's windows are in none,
        and one random read of this table costs far less than a binary search's twenty-odd
        over the keys (on ``bench datasets``' 100,000 items, most of the check's time)."""
        bits = max(16, int(len(self.keys) * 16 - 1).bit_length())
        mask = np.uint64((1 << bits) - 1)
        table = np.zeros(1 << (bits - 3), dtype=np.uint8)
        slot = self.keys & mask
        bit = np.left_shift(np.uint8(1), (slot & np.uint64(7)).astype(np.uint8))
        np.bitwise_or.at(table, slot >> np.uint64(3), bit)
        return table, mask

    def may_hold(self, hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.intp]:
        """The positions of ``hashes`` that may be keys (all that are, a few that are not)."""
        table, mask = self._filter
        slot = hashes & mask
        found = (table[slot >> np.uint64(3)] >> (slot & np.uint64(7)).astype(np.uint8)) & 1
        return np.flatnonzero(found)


def _version(eval_set: EvalSet, ngram: int) -> str:
    path = eval_set.path.resolve()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    stats = [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    about = [FORMAT, ngram, eval_set.id_field, list(eval_set.text_fields), stats]
    return hashlib.sha256(json.dumps(about).encode()).hexdigest()[:16]


def index_path(eval_set: EvalSet, ngram: int, directory: Path) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", eval_set.name)
    return directory / f"{safe}-{_version(eval_set, ngram)}.npz"


class _Builder:
    def __init__(self, n: int, fields: int) -> None:
        self.n = n
        self.fields = fields
        self.keys: list[npt.NDArray[np.uint64]] = []
        self.item: list[npt.NDArray[np.int32]] = []
        self.tag: list[npt.NDArray[np.int8]] = []
        self.ids: list[str] = []
        self.short: set[int] = set()

    def add_batch(self, batch: list[tuple[str, list[str]]]) -> None:
        first = len(self.ids)
        words: list[str] = []
        tags: list[int] = []
        ends: list[int] = []
        for item_id, texts in batch:
            self.ids.append(item_id)
            start = len(words)
            for f, text in enumerate(texts):
                t = tokens(text)
                words += t
                tags += [f] * len(t)
            length = len(words) - start
            if 0 < length < self.n:
                # Matched whole: one entry, the hash of all its tokens.
                whole = window_hashes(token_hashes(words[start:]), length)
                self._append(whole, np.array([first + len(ends)]), np.array([-1]))
                self.short.add(length)
                del words[start:], tags[start:]
            ends.append(len(words))
        if not words:
            return
        hashes, item, start = batch_windows(
            token_hashes(words), np.asarray(ends, dtype=np.int64), self.n
        )
        tag_of = np.asarray(tags, dtype=np.int8)
        begins = np.concatenate([[0], np.asarray(ends[:-1], dtype=np.int64)])
        at = begins[item] + start
        same = tag_of[at] == tag_of[at + self.n - 1]
        self._append(hashes, first + item, np.where(same, tag_of[at], -1))

    def _append(self, keys: npt.NDArray[np.uint64], item: npt.NDArray, tag: npt.NDArray) -> None:
        self.keys.append(keys)
        self.item.append(item.astype(np.int32))
        self.tag.append(tag.astype(np.int8))

    def finish(self, name: str) -> Index:
        keys = np.concatenate([np.empty(0, np.uint64), *self.keys])
        item = np.concatenate([np.empty(0, np.int32), *self.item])
        tag = np.concatenate([np.empty(0, np.int8), *self.tag])
        # Distinct n-grams per item: the first occurrence's field is kept.
        order = np.lexsort((keys, item))
        keys, item, tag = keys[order], item[order], tag[order]
        first = np.ones(len(keys), dtype=bool)
        first[1:] = (keys[1:] != keys[:-1]) | (item[1:] != item[:-1])
        keys, item, tag = keys[first], item[first], tag[first]
        items = len(self.ids)
        item_total = np.bincount(item, minlength=items).astype(np.int32)
        inside = tag >= 0
        cells = item[inside].astype(np.int64) * self.fields + tag[inside]
        field_total = np.bincount(cells, minlength=items * self.fields).astype(np.int32)
        order = np.argsort(keys, kind="stable")
        return Index(
            name=name,
            ngram=self.n,
            keys=keys[order],
            entry_item=item[order],
            entry_field=tag[order],
            item_ids=np.asarray(self.ids, dtype=np.str_),
            item_total=item_total,
            field_total=field_total.reshape(items, self.fields),
            short_lengths=tuple(sorted(self.short)),
        )


def build_index(eval_set: EvalSet, ngram: int) -> Index:
    """The index of every item of ``eval_set`` (see the module)."""
    builder = _Builder(ngram, len(eval_set.text_fields))
    batch: list[tuple[str, list[str]]] = []
    for item in loaders.items(eval_set):
        batch.append(item)
        if len(batch) >= _BATCH:
            builder.add_batch(batch)
            batch = []
    if batch:
        builder.add_batch(batch)
    return builder.finish(eval_set.name)


def save_index(index: Index, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            np.savez(
                out,
                keys=index.keys,
                entry_item=index.entry_item,
                entry_field=index.entry_field,
                item_ids=index.item_ids,
                item_total=index.item_total,
                field_total=index.field_total,
                short_lengths=np.asarray(index.short_lengths, dtype=np.int32),
                ngram=np.asarray(index.ngram),
            )
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_index(name: str, path: Path) -> Index:
    with np.load(path, allow_pickle=False) as data:
        return Index(
            name=name,
            ngram=int(data["ngram"]),
            keys=data["keys"],
            entry_item=data["entry_item"],
            entry_field=data["entry_field"],
            item_ids=data["item_ids"],
            item_total=data["item_total"],
            field_total=data["field_total"],
            short_lengths=tuple(int(k) for k in data["short_lengths"]),
        )


def load_index(eval_set: EvalSet, ngram: int, directory: Path) -> tuple[Index, bool]:
    """``eval_set``'s index from ``directory``, built and saved there first when its eval
    file changed (older versions of the set's index are removed); whether it was built."""
    path = index_path(eval_set, ngram, directory)
    if path.is_file():
        return read_index(eval_set.name, path), False
    index = build_index(eval_set, ngram)
    save_index(index, path)
    prefix = path.name.rsplit("-", 1)[0]
    for old in directory.glob(f"{prefix}-*.npz"):
        if old != path and len(old.name) == len(path.name):
            old.unlink(missing_ok=True)
    return index, True


__all__ = ["FORMAT", "Index", "build_index", "index_path", "load_index", "read_index", "save_index"]
