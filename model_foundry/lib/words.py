"""Whether a run of letters is a word: wordfreq's lists of each language's commonest words
(``wordfreq`` 3.1, its ``small`` lists), read once per process and only when a text needs
them, and kept as hashes (4 MB for the 18 languages' 30,000 words each) in
``$MODEL_FOUNDRY_CACHE/words/`` (default ``~/.cache/model-foundry``) for the next process."""

from __future__ import annotations

import bisect
import functools
import os
from collections.abc import Callable
from hashlib import blake2b
from pathlib import Path

import numpy as np

# The widely written Latin-script languages: where an answer's last word is looked up.
LATIN = ("en", "de", "fr", "es", "it", "pt", "nl")
# And the Latin-script languages whose password words the scrubber's cues know besides.
MORE = ("sv", "da", "nb", "fi", "pl", "cs", "tr", "id", "vi", "hu", "ro")
# A word is known when in a list's first this many; a cut word starts one of the first
# COMMON_WORDS, which are surely words.
KNOWN_WORDS = 30_000
COMMON_WORDS = 20_000
# A cut word lost this many letters at least: ``anoth`` of ``another``, not ``test`` of
# ``tests``.
LETTERS_LOST = 2


def _top(lang: str, n: int) -> list[str]:
    """``lang``'s ``n`` commonest words; wordfreq's whole list is let go after (it keeps each
    list it read, some 5 MB a language, for the process's life)."""
    import wordfreq

    words = wordfreq.top_n_list(lang, n, wordlist="small")
    wordfreq.get_frequency_list.cache_clear()
    wordfreq.get_frequency_dict.cache_clear()
    return words


def _stable_hash(word: str) -> int:
    return int.from_bytes(blake2b(word.encode(), digest_size=8).digest(), "little", signed=True)


def _cache_file(kind: str, languages: tuple[str, ...], suffix: str) -> Path:
    from importlib.metadata import version

    base = os.environ.get("MODEL_FOUNDRY_CACHE") or str(Path.home() / ".cache" / "model-foundry")
    name = f"{kind}-wordfreq-{version('wordfreq')}-{'-'.join(languages)}{suffix}"
    return Path(base) / "words" / name


def _save(path: Path, write: Callable[[Path], None]) -> None:
    """Written once for every later process; a cache that cannot be written is no error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        write(part)
        os.replace(part, path)
    except OSError:
        pass


def _write_array(path: Path, array: np.ndarray) -> None:
    # An open file, not a name: ``np.save`` adds ``.npy`` to a name that lacks it.
    with path.open("wb") as out:
        np.save(out, array)


@functools.cache
def _known(languages: tuple[str, ...], n: int = KNOWN_WORDS) -> np.ndarray:
    """The words of ``languages`` as sorted 64-bit hashes (8 bytes a word, not a string's
    60), built from wordfreq once and kept in ``$MODEL_FOUNDRY_CACHE/words/``."""
    path = _cache_file(f"known{n}", languages, ".npy")
    if path.exists():
        return np.load(path)
    known = np.unique(
        np.fromiter(
            (_stable_hash(w) for lang in languages for w in _top(lang, n)),
            dtype=np.int64,
        )
    )
    _save(path, lambda part: _write_array(part, known))
    return known


@functools.cache
def _common(languages: tuple[str, ...]) -> list[str]:
    path = _cache_file("common", languages, ".txt")
    if path.exists():
        return path.read_text(encoding="utf-8").split("\n")
    words = sorted({w for lang in languages for w in _top(lang, COMMON_WORDS) if w.isalpha()})
    _save(path, lambda part: part.write_text("\n".join(words), encoding="utf-8"))
    return words


def known_word(run: str, languages: tuple[str, ...] = LATIN, n: int = KNOWN_WORDS) -> bool:
    """``run``, lower-cased, is among the ``n`` commonest words of one of ``languages``
    (the first 200 or so are each language's function words)."""
    known = _known(languages, n)
    key = _stable_hash(run.lower())
    at = int(np.searchsorted(known, key))
    return at < len(known) and int(known[at]) == key


def zipf(run: str, lang: str) -> float:
    """How common ``run`` is in ``lang``: wordfreq's Zipf scale (0 unseen, 7 ``the``), from
    the same ``small`` list (kept once read: only a translation's check asks)."""
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
