"""``wrong_script`` without a target language named in the request: the answer is in another
language than its prompt asks for, or drifts into a script the prompt does not use.

- A prompt that asks for a translation into one of the widely written Latin-script languages
  (``Translate ... into French``) answered in another of them (``Wo ist der Bahnhof?``): the
  answer's words are rare in the target (a mean Zipf frequency under :data:`TARGET_ZIPF`,
  ``words.zipf``) and :data:`ZIPF_GAP` more common in another.
- An answer whose letters are :data:`FOREIGN_SHARE` or more in a script its prompt has none
  of, other than Latin and Japanese (Hangul in the answer to a Japanese question, Cyrillic
  to an English one), when the prompt asks for no translation, language or script.
"""

from __future__ import annotations

import re
from collections import Counter

from model_foundry.lib.gates.noise import letter_script
from model_foundry.lib.words import LATIN, zipf

_LANGUAGES = {
    "english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it",
    "portuguese": "pt", "dutch": "nl",
}  # fmt: skip
_INTO = re.compile(
    rf"(?i)\b(?:translat\w*|say|write|reply|answer|respond|rewrite)\b.{{0,120}}?"
    rf"\b(?:into|in|to)\s+(?P<lang>{'|'.join(_LANGUAGES)})\b",
    re.DOTALL,
)
# A prompt that names languages or scripts may get any of them back.
_ASKS_LANGUAGES = re.compile(
    r"(?i)translat\w*|language|script|alphabet|korean|russian|greek|arabic|hebrew|thai|hindi"
    r"|chinese|cyrillic|hangul|翻訳|言語|韓国語|ロシア語|中国語|訳"
)
_WORD = re.compile(r"[^\W\d_]{2,}")
_MIN_WORDS = 3
# The answer's words are this common in the target at most (Zipf, mean of the words), and
# this much less than in another language.
TARGET_ZIPF = 4.0
ZIPF_GAP = 2.0
FOREIGN_SHARE = 0.3
_FOREIGN_LETTERS = 12
_EITHER = frozenset({"LATIN", "JAPANESE"})
_DRIFT_SCRIPTS = 3


def wrong_language(answer: str, prompt: str) -> bool:
    """The translation asked for is in another Latin-script language (see the module)."""
    asked = _INTO.search(prompt)
    if asked is None:
        return False
    quoted = {w.lower() for w in _WORD.findall(prompt)}
    words = [w for w in _WORD.findall(answer) if w.isascii() or w.isalpha()]
    words = [w for w in words if w.lower() not in quoted or len(words) < 2 * _MIN_WORDS]
    if len(words) < _MIN_WORDS:
        return False
    target = _LANGUAGES[asked.group("lang").lower()]
    common = {lang: sum(zipf(w, lang) for w in words) / len(words) for lang in LATIN}
    best = max(z for lang, z in common.items() if lang != target)
    return common[target] < TARGET_ZIPF and best - common[target] >= ZIPF_GAP


def foreign_script(answer: str, prompt: str) -> bool:
    """Most of the answer's letters are in a script the prompt has none of (see the module)."""
    if not prompt or _ASKS_LANGUAGES.search(prompt):
        return False
    asked = {s for s in map(letter_script, prompt) if s}
    letters = Counter(s for s in map(letter_script, answer) if s)
    total = sum(letters.values())
    # Latin (code, names, terms) and Japanese stand in answers to either; one other language
    # drifted into, not a soup of many scripts (``noise_scripts``).
    foreign = max((n for s, n in letters.items() if s not in asked and s not in _EITHER), default=0)
    return (
        bool(asked)
        and len(letters) <= _DRIFT_SCRIPTS
        and foreign >= _FOREIGN_LETTERS
        and foreign >= FOREIGN_SHARE * total
    )


__all__ = ["foreign_script", "wrong_language"]
