"""The ``repetition`` gate: Gopher's repetition statistics, adapted to short chat answers.

Gopher's repetition filter (Rae et al. 2021, Table A1) as datatrove implements it
(huggingface/datatrove, ``src/datatrove/pipeline/filters/gopher_repetition_filter.py``,
commit 06c98b0f), with its thresholds as defaults (:class:`config.GateConfig`). Changes for
short chat answers, which Gopher's web documents are not: a line, paragraph or top n-gram
counts as repeated only from its third occurrence, so a refrain, a phrase used twice ("New
Year ... New Year's") or two alike CSS rules are no loop; the duplicate 5- to 10-gram
statistics apply from Gopher's minimum document length (50 words: Gopher's quality filter, a
stage before its repetition removal, drops shorter documents); lines or paragraphs without a
word (``}``, a code fence) are not compared. Words are ``\\w+`` runs (datatrove uses nltk's
English tokenizer).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from model_foundry.lib.gates.config import DEFAULTS, GateConfig

_WORD = re.compile(r"\w+")
# A word needs a letter: digits and underscores alone do not make an answer.
LETTER = re.compile(r"[^\W\d_]")
_PARAGRAPHS = re.compile(r"\n{2,}")


def _duplicates(parts: Sequence[str], repeat_from: int) -> tuple[int, int, int]:
    """(parts compared, occurrences counted as repeats, their characters): a part that
    occurs at least ``repeat_from`` times counts every occurrence after its first."""
    counts = Counter(p for p in parts if LETTER.search(p))
    compared = sum(counts.values())
    looped = {p: n for p, n in counts.items() if n >= repeat_from}
    repeats = sum(n - 1 for n in looped.values())
    chars = sum(len(p) * (n - 1) for p, n in looped.items())
    return compared, repeats, chars


def _is_phrase(gram: str) -> bool:
    """An n-gram of words: every part letters only and one of two letters or more. Runs of
    figures (a CSV's dates, a chord chart's ``A7``) and of one-letter variables (``e^x``) are
    a table's or a formula's shape, not a phrase said over and over."""
    parts = gram.split(" ")
    return all(p.isalpha() for p in parts) and any(len(p) > 1 for p in parts)


def ngrams(words: Sequence[str], n: int) -> list[str]:
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def _repeated_ngram_chars(words: Sequence[str], n: int) -> int:
    """Characters of n-grams seen before, stepping past each repeat (datatrove's count)."""
    seen: set[str] = set()
    chars = at = 0
    while at < len(words) - n + 1:
        gram = " ".join(words[at : at + n])
        if not _is_phrase(gram):
            at += 1
        elif gram in seen:
            chars += len(gram)
            at += n
        else:
            seen.add(gram)
            at += 1
    return chars


def repetition_stat(text: str, config: GateConfig = DEFAULTS) -> str | None:
    """The first Gopher statistic ``text`` exceeds (e.g. ``dup_line_frac``), else None."""
    size = len(text)
    if not size:
        return None
    paragraphs = _PARAGRAPHS.split(text.strip())
    compared, repeats, chars = _duplicates(paragraphs, config.repeat_from)
    if compared and repeats / compared > config.dup_para_frac:
        return "dup_para_frac"
    if chars / size > config.dup_para_char_frac:
        return "dup_para_char_frac"
    compared, repeats, chars = _duplicates(text.splitlines(), config.repeat_from)
    if compared and repeats / compared > config.dup_line_frac:
        return "dup_line_frac"
    if chars / size > config.dup_line_char_frac:
        return "dup_line_char_frac"
    words = _WORD.findall(text)
    for n, limit in sorted(config.top_ngram_char_frac.items()):
        counts = Counter(g for g in ngrams(words, n) if _is_phrase(g))
        if counts:
            gram, times = counts.most_common(1)[0]
            if times >= config.repeat_from and len(gram) * times / size > limit:
                return f"top_{n}_gram"
    if len(words) < config.min_words_for_ngram_dups:
        return None
    for n, limit in sorted(config.dup_ngram_char_frac.items()):
        if _repeated_ngram_chars(words, n) / size > limit:
            return f"dup_{n}_gram"
    return None


__all__ = ["LETTER", "ngrams", "repetition_stat"]
