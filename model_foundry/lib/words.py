"""Whether a run of letters is a word: wordfreq's lists of each language's commonest words
(``wordfreq`` 3.1, its ``small`` lists: about 30,000 words a language, some 5 MB each in
memory, read once per process and only when a text needs them)."""

from __future__ import annotations

import bisect
import functools

# The widely written Latin-script languages: where an answer's last word is looked up.
LATIN = ("en", "de", "fr", "es", "it", "pt", "nl")
# And the languages whose passwords the scrubber's cues know besides.
MORE = ("sv", "da", "nb", "fi", "pl", "cs", "tr", "id", "vi", "hu", "ro", "ru", "ja", "ko")
# A word is known when in a list's first this many; a cut word starts one of the first
# COMMON_WORDS, which are surely words.
KNOWN_WORDS = 30_000
COMMON_WORDS = 20_000
# A cut word lost this many letters at least: ``anoth`` of ``another``, not ``test`` of
# ``tests``.
LETTERS_LOST = 2


@functools.cache
def _known(lang: str) -> frozenset[str]:
    from wordfreq import top_n_list

    return frozenset(top_n_list(lang, KNOWN_WORDS, wordlist="small"))


@functools.cache
def _common(languages: tuple[str, ...]) -> list[str]:
    from wordfreq import top_n_list

    return sorted(
        {
            w
            for lang in languages
            for w in top_n_list(lang, COMMON_WORDS, wordlist="small")
            if w.isalpha()
        }
    )


def known_word(run: str, languages: tuple[str, ...] = LATIN) -> bool:
    """``run``, lower-cased, is a common word of one of ``languages``."""
    low = run.lower()
    return any(low in _known(lang) for lang in languages)


def zipf(run: str, lang: str) -> float:
    """How common ``run`` is in ``lang``: wordfreq's Zipf scale (0 unseen, 7 ``the``), from
    the same ``small`` list."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(run, lang, wordlist="small"))


def cut_word(run: str) -> bool:
    """``run`` (lower-case letters) is no word of :data:`LATIN` but the start of a common
    one, :data:`LETTERS_LOST` letters short at least: a word the model stopped in."""
    if known_word(run):
        return False
    common = _common(LATIN)
    at = bisect.bisect_left(common, run)
    return any(
        w.startswith(run) and len(w) >= len(run) + LETTERS_LOST
        for w in common[at : at + 50]
        if w.startswith(run)
    )


__all__ = ["LATIN", "MORE", "cut_word", "known_word", "zipf"]
