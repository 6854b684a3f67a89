"""Normalised tokens and hashed n-grams: what eval items and exported rows are compared on.

Text is NFKC-normalised (full-width letters and digits become ASCII) and case-folded; its
tokens are words (runs of letters, digits and ``_``), except in scripts written without
spaces (kana, kanji, Thai), where each character is a token. So punctuation, case and
spacing never matter, and a Japanese item with a space between every character has the same
tokens as the item. An n-gram is n consecutive tokens, hashed to 64 bits: each token by
BLAKE2b (stable across processes, so the index on disk stays valid), then combined by a
polynomial over the window and mixed (MurmurHash3's 64-bit finaliser), with the window's
length folded in so an item matched whole never collides with an n-gram of another length.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]

# Scripts written without spaces between words: one token per character.
_NO_SPACE = (
    "\u0e00-\u0e7f"  # Thai
    "\u3040-\u30ff"  # hiragana, katakana
    "\u31f0-\u31ff"  # katakana extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
_TOKEN = re.compile(rf"[{_NO_SPACE}]|[^\W{_NO_SPACE}]+")
_P = np.uint64(0x9E3779B97F4A7C15)  # odd: the polynomial base
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
# Bounded low: rows are full of unique ids and hashes, which would fill a large cache.
_CACHE_MAX = 1 << 16
_cache: dict[str, int] = {}


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` (see the module)."""
    return _TOKEN.findall(normalise(text))


def token_spans(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The normalised text and each token's (start, end) in it."""
    norm = normalise(text)
    return norm, [m.span() for m in _TOKEN.finditer(norm)]


def token_hashes(words: Sequence[str]) -> U64:
    """Each token's stable 64-bit hash; the common ones cached."""
    cache = _cache
    # One lookup per token in C (map), Python only for the tokens not seen yet.
    found = list(map(cache.get, words))
    if None not in found:
        return np.array(found, dtype=np.uint64)
    for i, h in enumerate(found):
        if h is None:
            w = words[i]
            h = cache.get(w)
            if h is None:
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
                if len(cache) >= _CACHE_MAX:
                    cache.clear()
                cache[w] = h
            found[i] = h
    return np.array(found, dtype=np.uint64)


def _mix(h: U64, length: int) -> U64:
    h = h ^ np.uint64(length * 0x100000001B3)
    h = (h ^ (h >> np.uint64(33))) * _M1
    h = (h ^ (h >> np.uint64(33))) * _M2
    return h ^ (h >> np.uint64(33))


def window_hashes(hashes: U64, n: int) -> U64:
    """The hash of every window of ``n`` consecutive tokens (none when fewer)."""
    count = len(hashes) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = hashes[:count].copy()
        for j in range(1, n):
            h = h * _P + hashes[j : j + count]
        return _mix(h, n)


def batch_windows(
    hashes: U64, ends: npt.NDArray[np.int64], n: int
) -> tuple[U64, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Windows of ``n`` tokens over several texts' tokens laid end to end (``ends``: where
    each text's tokens end), none across two texts: their hashes, the text each is in and
    its first token's position within that text."""
    every = window_hashes(hashes, n)
    if not len(every):
        empty = np.empty(0, dtype=np.int64)
        return every, empty, empty
    starts = np.arange(len(every), dtype=np.int64)
    text = np.searchsorted(ends, starts, side="right")
    inside = starts + n <= ends[np.minimum(text, len(ends) - 1)]
    begins = np.concatenate([[0], ends[:-1]])
    text = text[inside]
    return every[inside], text, starts[inside] - begins[text]


__all__ = ["batch_windows", "normalise", "token_hashes", "token_spans", "tokens", "window_hashes"]
