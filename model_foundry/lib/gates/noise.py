"""Noise gates: text statistics in the manner of Gopher's quality filter (Rae et al. 2021,
section A.1.1) as datatrove implements it (huggingface/datatrove,
``src/datatrove/pipeline/filters/gopher_quality_filter.py``), for chat answers rather than web
pages.

An answer that is a word or two followed by a run of digits and punctuation passes every
repetition, echo and script check; these four statistics catch it, each with its own cause:

- ``noise_words``: too small a share of the words has a letter in it (Gopher: 80% must);
- ``noise_symbols``: too many symbol-only words (``###``, ``!?!?``, ``@#$%``) per word with a
  letter (Gopher: at most 0.1 ``#`` or ``...`` per word);
- ``noise_word_length``: the mean word with a letter is longer than any language's (Gopher:
  3 to 10 characters on web pages; a random run of letters is far longer);
- ``noise_chars``: too large a share of the text is neither words with a letter nor numbers.

Chat answers are not web pages, so before counting, code (fenced blocks and inline spans),
URLs and Markdown's own marks (table pipes, bullets, heading and quote marks, rules) are taken
out, and the rest is cut into words at spaces and at the separators of tables, lists and
assignments (``,`` ``;`` ``|`` ``=`` tabs). Numbers (``42``, ``3.14``, ``1,024``, ``2026-11-01``,
``12:30``, ``50%``, ``48.8°``) are neither words nor noise, and neither are operators of one or
two characters (``=``, ``->``): an answer may rightly be code, a CSV table, a formula or a
list of figures. Japanese has no spaces: a run of kanji, of hiragana or of katakana (with the
punctuation that follows it) counts as a word, close to how its words and particles
alternate. An answer with fewer than :data:`MIN_CHARS` characters of words and
noise left is not judged.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from itertools import pairwise

from model_foundry.lib.gates.config import DEFAULTS, GateConfig

NOISE_CAUSES = ("noise_words", "noise_symbols", "noise_word_length", "noise_chars")


_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
# Markdown's marks at the start of a line (bullets, numbered items, headings, quotes) and
# whole lines that are only a rule or a table's delimiter row.
_LINE_MARKS = re.compile(r"(?m)^[ \t]*(?:[-*+>]|#{1,6}|\d{1,3}[.)])[ \t]+")
_RULE_LINES = re.compile(r"(?m)^[ \t]*(?:[-*_=]{3,}|\|?[ \t:|-]*-{3,}[ \t:|-]*\|?)[ \t]*$")
# Where words part besides spaces: the separators of tables, lists and assignments.
_SEPARATORS = re.compile(r"[,;|=\t/\\]|、")
# A figure: digits with the marks of decimals, dates, times, ranges and units around them
# (``3.14``, ``2026-03-01T00:10:00Z``, ``(10.0.0.0–10.255.255.255)``, ``48°51′30″N``, ``15.2℃``)
# and at most two letters (a unit or a compass point).
_FIGURE_MARKS = re.compile(r"^[\d.,:\-–—+±~≈<>$€£¥#()\[\]°′″℃%'\"!?]*$")
_UNITS = re.compile(r"[°′″℃%]")
# A hash or an id written in hex (a git SHA, a digest): digits and the letters a to f.
_HEX = re.compile(r"^[0-9a-fA-F]{6,}$")
# An identifier: a model name, a version, a package or a build id (``gemma-4-26b-a4b-it``,
# ``v1.2.3-rc1``, ``iq4_xs#578598582``): letters-and-digits parts with single marks between them.
# Noise writes its marks side by side.
_IDENTIFIER = re.compile(r"^[~@]?[^\W_]+(?:[-_.#:~@+][^\W_]+)+$")
# Latin words of four letters or more without a vowel are no words of any Latin-script
# language (acronyms aside, which are written in capitals).
_LATIN_WORD = re.compile(r"^[A-Za-z]{4,}$")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")


# Words: a run of kanji, of hiragana or of katakana with the punctuation that follows it, or
# a run of other non-space characters.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\u3005\uff66-\uff9f"
_WORDS = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\u3005]+[^\\s\\w]*"
    "|[\u3040-\u309f]+[^\\s\\w]*|[\u30a0-\u30ff\uff66-\uff9f]+[^\\s\\w]*"
    f"|[^\\s{_CJK}]+"
)
# A letter: not the long-vowel and middle-dot marks, which Unicode counts as letters but
# stand between kana, not for them.
_LETTER = re.compile(r"[^\W\d_\u30fc\u30fb\uff70\uff65]")


def is_figure(run: str) -> bool:
    """A number, a date, a time, a range or an amount with its unit, a hex hash or an
    identifier with digits in it: digits with single marks between them (random digits and
    punctuation have marks side by side)."""
    if not any(c.isdigit() for c in run):
        return False
    core = run.strip("([").rstrip(")].,:;!?")
    if _HEX.match(core) or (_IDENTIFIER.match(core) and _LETTER.search(core)):
        return True
    if len(_LETTER.findall(core)) > 2 or not _FIGURE_MARKS.match(_LETTER.sub("", core)):
        return False
    # Units may stand side by side (``30″`` is ``30′′`` after NFKC, ``5°C``).
    marks = _UNITS.sub("", _LETTER.sub("", core))
    return not any(not a.isdigit() and not b.isdigit() for a, b in pairwise(marks))


def _is_word(run: str) -> bool:
    """A run with letters for at least half its characters, and not a Latin run no language
    would write (no vowel, not in capitals)."""
    if 2 * len(_LETTER.findall(run)) < len(run):
        return False
    bare = run.strip(".,:;!?()[]'\"")
    return not (_LATIN_WORD.match(bare) and not bare.isupper() and not _VOWEL.search(bare))


# A symbol-only word: no letter and no digit (``###``, ``!!!``, ``...``, ``@#$%``).
_SYMBOLS_ONLY = re.compile(r"^(?:[^\w]|_)+$")


# Fewer characters of words and noise than this left: not judged.
MIN_CHARS = 20
# Symbol-only words this short (``=``, ``->``, ``/``) are operators and arrows, not noise.
OPERATOR_LENGTH = 2


@dataclass(frozen=True)
class NoiseStats:
    """The four statistics of one text (see the module)."""

    words: int
    letter_words: float
    symbols_per_word: float
    mean_word_length: float
    noise_chars: float


def prose(text: str) -> str:
    """``text`` without code, URLs and Markdown's marks, its separators made spaces: what the
    noise statistics judge."""
    text = _FENCE.sub(" ", unicodedata.normalize("NFKC", text))
    text = _INLINE_CODE.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _RULE_LINES.sub(" ", text)
    text = _LINE_MARKS.sub(" ", text)
    return _SEPARATORS.sub(" ", text)


def noise_stats(text: str) -> NoiseStats | None:
    """The four statistics over ``text``'s prose, or None when too little of it is left.

    A word is a run with letters for at least half of its characters; a run with fewer,
    that is neither a number nor an operator, is noise."""
    words: list[str] = []
    noise: list[str] = []
    for run in _WORDS.findall(prose(text)):
        if _is_word(run):
            words.append(run)
        elif not is_figure(run) and len(run) > OPERATOR_LENGTH:
            noise.append(run)
    word_chars = sum(map(len, words))
    noise_chars = sum(map(len, noise))
    if word_chars + noise_chars < MIN_CHARS:
        return None
    symbols = sum(1 for run in noise if _SYMBOLS_ONLY.match(run))
    return NoiseStats(
        words=len(words) + len(noise),
        letter_words=len(words) / (len(words) + len(noise)),
        symbols_per_word=symbols / max(1, len(words)),
        mean_word_length=word_chars / len(words) if words else 0.0,
        noise_chars=noise_chars / (word_chars + noise_chars),
    )


def noise_cause(text: str, config: GateConfig = DEFAULTS) -> str | None:
    """The first noise statistic ``text`` breaks (see :data:`NOISE_CAUSES`) that the config
    does not skip, else None."""
    stats = noise_stats(text)
    if stats is None:
        return None
    broken = {
        "noise_words": stats.letter_words < config.noise_letter_words,
        "noise_symbols": stats.symbols_per_word > config.noise_symbols_per_word,
        # One long word may be a name: only a very long one is judged alone.
        "noise_word_length": stats.mean_word_length > config.noise_word_length
        and (stats.words > 1 or stats.mean_word_length > 2 * config.noise_word_length),
        "noise_chars": stats.noise_chars > config.noise_chars,
    }
    return next((c for c in NOISE_CAUSES if broken[c] and c not in config.skip), None)
