"""Rows checked against the eval sets' indexes, a batch at a time, and the figures kept.

A row's score against an item is the share of the item's n-grams the row contains, as
open-instruct's ``decontamination/search.py`` (Tulu 3) reports it: here the best of the share
of the whole item's n-grams and the share of any one text field's (a row that quotes a
benchmark question without its answer has the question: with a field of its own, the
question is not diluted by the answer's n-grams). An item shorter than n is matched whole
(score 1 or 0). A row is held back (``contaminated``) when its best score reaches the
threshold; a row with a lower score is kept and counted. Each match names the eval set, the
item's id, the score and the span of the row (normalised text) from its first matched
n-gram to its last.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from model_foundry.lib import settings
from model_foundry.lib.decontamination.config import EvalSets, load_eval_sets
from model_foundry.lib.decontamination.index import Index, load_index
from model_foundry.lib.decontamination.ngrams import (
    batch_windows,
    token_hashes,
    token_spans,
    tokens,
)

CAUSE = "contaminated"
_SPAN_CHARS = 300
_TOP_ITEMS = 5


@dataclass(frozen=True)
class Match:
    """A row's best match: the eval set, the item, the score and the row's matched span."""

    eval_set: str
    item_id: str
    score: float
    span: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "eval_set": self.eval_set,
            "item_id": self.item_id,
            "score": self.score,
            "span": self.span,
        }


@dataclass
class SetFigures:
    """One eval set's figures in an export."""

    items: int
    index_built: bool
    rows_held_back: int = 0
    rows_under_threshold: int = 0
    hits: Counter[str] = field(default_factory=Counter)

    def as_dict(self, rows_checked: int) -> dict[str, Any]:
        return {
            "items": self.items,
            "index_built": self.index_built,
            "rows_checked": rows_checked,
            "rows_held_back": self.rows_held_back,
            "rows_under_threshold": self.rows_under_threshold,
            "items_hit_most": [
                {"item_id": k, "rows": v} for k, v in self.hits.most_common(_TOP_ITEMS)
            ],
        }


@dataclass(frozen=True)
class _Windows:
    """A batch's windows of one length: hashes, row and first token's position in it."""

    length: int
    hashes: npt.NDArray[np.uint64]
    row: npt.NDArray[np.int64]
    start: npt.NDArray[np.int64]


class Decontaminator:
    """Checks texts against every configured eval set; keeps the export's figures."""

    def __init__(self, config: EvalSets, indexes: Sequence[tuple[Index, bool]]) -> None:
        self.config = config
        self.indexes = [i for i, _ in indexes]
        self.figures = {i.name: SetFigures(i.items, built) for i, built in indexes}
        self.rows_checked = 0
        self.lengths = sorted({config.ngram, *(k for i in self.indexes for k in i.short_lengths)})

    @property
    def threshold(self) -> float:
        return self.config.threshold

    def check(self, texts: Sequence[str]) -> list[Match | None]:
        """Each text's best match (None: no n-gram of any item), counted in the figures:
        held back when its score reaches the threshold."""
        self.rows_checked += len(texts)
        words = [tokens(t) for t in texts]
        ends = np.cumsum([len(w) for w in words], dtype=np.int64)
        flat = token_hashes([w for ws in words for w in ws])
        windows = [_Windows(k, *batch_windows(flat, ends, k)) for k in self.lengths]
        best: dict[int, tuple[float, Index, int, list[tuple[int, int]]]] = {}
        for index in self.indexes:
            for row, item, score, where in self._scores(index, windows):
                if row not in best or score > best[row][0]:
                    best[row] = (score, index, item, where)
        out: list[Match | None] = [None] * len(texts)
        for row, (score, index, item, where) in best.items():
            out[row] = match = Match(
                index.name, str(index.item_ids[item]), round(score, 4), _span(texts[row], where)
            )
            figures = self.figures[index.name]
            if score >= self.threshold:
                figures.rows_held_back += 1
                figures.hits[match.item_id] += 1
            else:
                figures.rows_under_threshold += 1
        return out

    def _scores(
        self, index: Index, windows: Sequence[_Windows]
    ) -> list[tuple[int, int, float, list[tuple[int, int]]]]:
        """Per row with a hit in ``index``: its best item, score and matched token ranges."""
        rows, entries, starts, lengths = [], [], [], []
        for w in windows:
            if w.length != index.ngram and w.length not in index.short_lengths:
                continue
            maybe = index.may_hold(w.hashes)
            left = np.searchsorted(index.keys, w.hashes[maybe], side="left")
            right = np.searchsorted(index.keys, w.hashes[maybe], side="right")
            found = np.flatnonzero(right > left)
            if not len(found):
                continue
            left, right, hit = left[found], right[found], maybe[found]
            # A key may belong to several items: one pair per (window, entry).
            count = right - left
            at = np.repeat(hit, count)
            offset = np.arange(len(at)) - np.repeat(np.cumsum(count) - count, count)
            entries.append(np.repeat(left, count) + offset)
            rows.append(w.row[at])
            starts.append(w.start[at])
            lengths.append(np.full(len(at), w.length))
        if not rows:
            return []
        row, entry = np.concatenate(rows), np.concatenate(entries)
        start, length = np.concatenate(starts), np.concatenate(lengths)
        item = index.entry_item[entry].astype(np.int64)
        pairs = row * index.items + item
        order = np.lexsort((entry, pairs))
        pairs, entry, start, length = pairs[order], entry[order], start[order], length[order]
        bounds = np.flatnonzero(np.diff(pairs)) + 1
        found: dict[int, tuple[float, int, list[tuple[int, int]]]] = {}
        for lo, hi in zip([0, *bounds], [*bounds, len(pairs)], strict=True):
            r, i = divmod(int(pairs[lo]), index.items)
            covered = np.unique(entry[lo:hi])
            score = len(covered) / max(int(index.item_total[i]), 1)
            fields = index.entry_field[covered]
            for f in np.unique(fields[fields >= 0]):
                total = int(index.field_total[i, f])
                if total:
                    score = max(score, int((fields == f).sum()) / total)
            if r not in found or score > found[r][0]:
                ends = start[lo:hi] + length[lo:hi]
                found[r] = (score, i, list(zip(start[lo:hi].tolist(), ends.tolist(), strict=True)))
        return [(r, i, score, where) for r, (score, i, where) in found.items()]

    def as_dict(self) -> dict[str, Any]:
        """The manifest's ``decontamination`` entry."""
        return {
            # The name only: a card or manifest that is published names no local folder.
            "file": self.config.file.name,
            "ngram": self.config.ngram,
            "threshold": self.threshold,
            "rows_checked": self.rows_checked,
            "eval_sets": {name: f.as_dict(self.rows_checked) for name, f in self.figures.items()},
        }


def _span(text: str, where: list[tuple[int, int]]) -> str:
    """The row's normalised text from its first matched token to its last, cut short."""
    norm, spans = token_spans(text)
    first = min(s for s, _ in where)
    last = max(e for _, e in where) - 1
    if not spans or last >= len(spans):
        return ""
    out = norm[spans[first][0] : spans[last][1]]
    return out if len(out) <= _SPAN_CHARS else out[: _SPAN_CHARS - 1] + "…"


def decontaminator(
    config: EvalSets | None = None, directory: Path | None = None
) -> Decontaminator | None:
    """The checker of the configured eval sets (``MODEL_FOUNDRY_EVAL_SETS`` unless
    ``config``), their indexes loaded from ``directory`` (default: the data dir's
    ``decontamination/``) or built there; None when no eval sets are configured."""
    config = config or load_eval_sets()
    if config is None:
        return None
    directory = directory or settings.decontamination_dir()
    return Decontaminator(config, [load_index(s, config.ngram, directory) for s in config.sets])


__all__ = ["CAUSE", "Decontaminator", "Match", "SetFigures", "decontaminator"]
