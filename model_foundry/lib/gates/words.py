"""Whether a run of letters is a word: wordfreq's lists of the commonest words in the widely
written Latin-script languages (``wordfreq`` 3.1, its ``small`` lists: about 30,000 words each,
30 MB loaded, read once per process and only when an answer needs them)."""

from __future__ import annotations

import bisect
import functools

# The languages whose words an answer's last word is looked up in.
LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl")
# A word is known when in a list's first this many; a cut word starts one of the first
# COMMON_WORDS, which are surely words.
KNOWN_WORDS = 30_000
COMMON_WORDS = 20_000
# A cut word lost this many letters at least: ``anoth`` of ``another``, not ``test`` of
# ``tests``.
LETTERS_LOST = 2


@functools.cache
def _lists() -> tuple[frozenset[str], list[str]]:
    from wordfreq import top_n_list

    known: set[str] = set()
    common: set[str] = set()
    for lang in LANGUAGES:
        words = top_n_list(lang, KNOWN_WORDS, wordlist="small")
        known.update(words)
        common.update(w for w in words[:COMMON_WORDS] if w.isalpha())
    return frozenset(known), sorted(common)


def cut_word(run: str) -> bool:
    """``run`` (lower-case letters) is no word of :data:`LANGUAGES` but the start of a
    common one, :data:`LETTERS_LOST` letters short at least: a word the model stopped in."""
    known, common = _lists()
    if run in known:
        return False
    at = bisect.bisect_left(common, run)
    return any(
        w.startswith(run) and len(w) >= len(run) + LETTERS_LOST
        for w in common[at : at + 50]
        if w.startswith(run)
    )


__all__ = ["LANGUAGES", "cut_word"]
