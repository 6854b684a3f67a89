"""The one language detector: which script a text is written in, Japanese or Latin.

Japanese is told by its script, counted a character at a time (its words have no spaces):

- hiragana (U+3041-U+3096, the iteration marks ゝゞ and ゟ) and the voicing marks
  (U+3099-U+309C) that go with any kana;
- katakana (U+30A1-U+30FA, ヽヾヿ, the small kana U+31F0-U+31FF) and the prolonged sound
  mark ー (U+30FC), which Unicode files under neither script but only kana carries;
- half-width katakana (U+FF66-U+FF9D) with its prolonged sound mark ｰ and voicing marks;
- kanji: the CJK unified ideographs (U+4E00-U+9FFF), extension A (U+3400-U+4DBF), the
  compatibility ideographs (U+F900-U+FAFF), the supplementary planes' extensions
  (U+20000-U+3FFFF), and 々 〇 〻 and the Hangzhou numerals, which Unicode counts as Han.

The Japanese punctuation in these blocks (・ ゠ 、 。 「」) is no letter of either script.
Latin is A-Z and the accented letters of Latin-1 and Latin Extended-A/B; a Latin word is a
run of them. Counts are taken after NFKC, so full-width Latin is Latin; half-width kana is
kana either way.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

HIRAGANA = "\u3041-\u3096\u3099-\u309f"
KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"
KANJI = (
    "\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0003ffff"
)
JAPANESE = f"{HIRAGANA}{KATAKANA}{KANJI}"
_LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"

_JAPANESE_CHAR = re.compile(f"[{JAPANESE}]")
_LATIN_LETTER = re.compile(f"[{_LATIN}]")
_LATIN_WORD = re.compile(f"[{_LATIN}]+")
# A run of letters in neither script (Hangul, Cyrillic, Greek, Arabic, ...).
_OTHER_WORD = re.compile(f"[^\\W\\d_{_LATIN}{JAPANESE}]+")
# A word for comparing texts: a run of one Japanese script (kanji, hiragana or katakana; the
# language has no spaces and its words and particles alternate scripts), else a \w run.
WORD = re.compile(f"[{KANJI}]+|[{HIRAGANA}]+|[{KATAKANA}]+|[^\\W{JAPANESE}]+")

# The share of Japanese among a text's letters from which it is Japanese: a fifth, not a half,
# since a Japanese sentence carries code names and English terms, and one kanji says as much
# as several Latin letters.
JAPANESE_FROM = 0.2
# A Latin word this long shows English: shorter ones are as often a unit, a variable or a code.
_ENGLISH_WORD = 3
_ENGLISH_RUN = re.compile(f"[{_LATIN}]{{{_ENGLISH_WORD},}}")


@dataclass(frozen=True)
class Scripts:
    """What a text is written in: Japanese characters, Latin letters and words, and words of
    any other script."""

    japanese: int
    latin_letters: int
    latin_words: int
    other_words: int
    longest_latin_word: int


def scripts(text: str) -> Scripts:
    """The counts of ``text``'s scripts, after NFKC."""
    text = unicodedata.normalize("NFKC", text)
    words = _LATIN_WORD.findall(text)
    return Scripts(
        japanese=len(_JAPANESE_CHAR.findall(text)),
        latin_letters=len(_LATIN_LETTER.findall(text)),
        latin_words=len(words),
        other_words=len(_OTHER_WORD.findall(text)),
        longest_latin_word=max(map(len, words), default=0),
    )


def detect_language(text: str) -> str:
    """``"ja"`` when Japanese makes up :data:`JAPANESE_FROM` of the letters, else ``"en"``."""
    found = scripts(text)
    if not found.japanese:
        return "en"
    return (
        "ja" if found.japanese / (found.japanese + found.latin_letters) >= JAPANESE_FROM else "en"
    )


def languages(texts: Sequence[str]) -> list[str]:
    """The languages some text shows (for a dataset card): ``ja`` by any Japanese character,
    ``en`` by a Latin word of three letters or more."""
    found = set()
    for text in texts:
        # A search for each, not the full counts: an all-English export reads every text.
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text)
            if _JAPANESE_CHAR.search(text):
                found.add("ja")
        if _ENGLISH_RUN.search(text):
            found.add("en")
        if len(found) == 2:
            break
    return sorted(found)


def script_share(text: str, target: str) -> float | None:
    """The share of ``text`` in ``target``'s script (``ja`` or ``en``): Japanese characters
    and Latin words against those and words of any other script; None when it has no letter
    or the target is another language."""
    found = scripts(text)
    total = found.japanese + found.latin_words + found.other_words
    if target not in ("ja", "en") or not total:
        return None
    return (found.japanese if target == "ja" else found.latin_words) / total


__all__ = [
    "HIRAGANA",
    "JAPANESE",
    "JAPANESE_FROM",
    "KANJI",
    "KATAKANA",
    "WORD",
    "Scripts",
    "detect_language",
    "languages",
    "script_share",
    "scripts",
]
