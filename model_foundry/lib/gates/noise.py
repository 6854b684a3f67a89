"""Noise gates: text statistics in the manner of Gopher's quality filter (Rae et al. 2021,
section A.1.1) as datatrove implements it (huggingface/datatrove,
``src/datatrove/pipeline/filters/gopher_quality_filter.py``), for chat answers rather than web
pages.

An answer that is a word or two followed by a run of digits and punctuation passes every
repetition, echo and script check; these four statistics catch it, each with its own cause:

- ``noise_words``: too small a share of the words has a letter in it (Gopher: 80% must);
- ``noise_symbols``: too many symbol-only words (``###``, ``!?!?``, ``@#$%``) per word with a
  letter (Gopher: at most 0.1 ``#`` or ``...`` per word), or a good start that ends in such
  junk (:func:`junk_tail`);
- ``noise_word_length``: the mean word with a letter is longer than any language's (Gopher:
  3 to 10 characters on web pages; a random run of letters is far longer);
- ``noise_chars``: too large a share of the text is neither words with a letter nor numbers.

Junk whose runs are letters or figures passes those four; five more gates, each its own cause,
take it: ``noise_stop_words`` (Gopher's stop-word rule, per stretch of words and per line),
``noise_consonants`` (random letters), ``noise_scripts`` (scripts mixed inside words, or a
line in many scripts, none its own),
``noise_hex`` (a hex dump) and ``noise_digits`` (random digit groups); see each function.
Japanese junk (``noise_kana``, ``noise_particles``: ``noise_japanese.py``) and the machinery's
(``noise_escapes``, ``noise_tokens``, ``noise_keyboard``, ``noise_unfinished``,
``noise_mojibake``, ``noise_layout``: ``noise_artefacts.py``) come last.

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

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

from model_foundry.lib.gates.config import DEFAULTS, GateConfig
from model_foundry.lib.gates.noise_artefacts import (
    URL,
    byte_escapes,
    chat_roles,
    keyboard_walks,
    layout,
    mojibake,
    template_slots,
    tokenizer_marks,
    unfinished,
)
from model_foundry.lib.gates.noise_japanese import (
    conjunctions_in_run,
    kana_out_of_order,
    lone_particles,
    stretch_without_particles,
)

NOISE_CAUSES = (
    "noise_words",
    "noise_symbols",
    "noise_word_length",
    "noise_chars",
    "noise_stop_words",
    "noise_consonants",
    "noise_scripts",
    "noise_hex",
    "noise_digits",
    "noise_kana",
    "noise_particles",
    "noise_escapes",
    "noise_tokens",
    "noise_keyboard",
    "noise_unfinished",
    "noise_mojibake",
    "noise_layout",
)


# A fence opens a line (CommonMark: up to three spaces before it); backticks inside a line
# are no code block (noise often holds a few).
FENCE = re.compile(
    r"^[ \t]{0,3}(?:```.*?(?:^[ \t]*```|\Z)|~~~.*?(?:^[ \t]*~~~|\Z))", re.DOTALL | re.MULTILINE
)
INLINE_CODE = re.compile(r"`[^`\n]+`")
# Markdown's marks at the start of a line (bullets, numbered items, headings, quotes) and
# whole lines that are only a rule or a table's delimiter row.
_LINE_MARKS = re.compile(r"(?m)^[ \t]*(?:[-*+>]|#{1,6}|\d{1,3}[.)])[ \t]+")
RULE_LINES = re.compile(r"(?m)^[ \t]*(?:[-*_=]{3,}|\|?[ \t:|-]*-{3,}[ \t:|-]*\|?)[ \t]*$")
# Where words part besides spaces: the separators of tables, lists and assignments.
_SEPARATORS = re.compile(r"[,;|=\t/\\]|、")
# A figure: digits with the marks of decimals, dates, times, ranges and units around them
# (``3.14``, ``2026-03-01T00:10:00Z``, ``(10.0.0.0–10.255.255.255)``, ``48°51′30″N``, ``15.2℃``)
# and at most two letters (a unit or a compass point).
_FIGURE_MARKS = re.compile(r"^[\d.,:\-–—+±~≈<>$€£¥#()\[\]°′″℃%'\"!?]*$")
_UNITS = re.compile(r"[°′″℃%]")
# A hash or an id written in hex (a git SHA, a digest): digits and the letters a to f, at most
# as long as the longest digest written in hex (SHA-512, 128 characters); a longer run is a
# dump, no figure.
_HEX = re.compile(r"^[0-9a-fA-F]{6,128}$")
# An identifier: a model name, a version, a package or a build id (``gemma-4-26b-a4b-it``,
# ``v1.2.3-rc1``, ``iq4_xs#578598582``): letters-and-digits parts with single marks between them.
# Noise writes its marks side by side.
_IDENTIFIER = re.compile(r"^[~@]?[^\W_]+(?:[-_.#:~@+][^\W_]+)+$")
# Latin words of four letters or more without a vowel are no words of any Latin-script
# language (acronyms aside, which are written in capitals).
_LATIN_WORD = re.compile(r"^[A-Za-z]{4,}$")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")


# Words: a run of kanji, of hiragana or of katakana with the punctuation that follows it, or
# a run of other non-space characters. The voicing marks go with the katakana before them:
# NFKC turns half-width ``ｷﾟ`` into ``キ`` and a combining mark in the hiragana block.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\u3005\uff66-\uff9f"
_WORDS = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\u3005]+[^\\s\\w]*"
    "|[\u3040-\u309f]+[^\\s\\w]*|[\u30a0-\u30ff\uff66-\uff9f\u3099-\u309c]+[^\\s\\w]*"
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


# A formula's parts: figures and short names (``2^10``, ``3×7``, ``√2``, ``sin(0.5)``, ``**12**``
# in bold, LaTeX's ``int_0^3`` and ``tfrac{x^3}{3}``): operators between them, a function's
# brackets around them.
_FORMULA_MARKS = re.compile(r"\*\*|[\^×÷*+<>≤≥≈√−(){}_]")
_NAME = re.compile(r"[A-Za-z]{1,6}")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def is_formula(run: str) -> bool:
    """Numbers and names of at most six letters between operators, a number among them."""
    parts = [p for p in _FORMULA_MARKS.split(run) if p]
    return any(_NUMBER.fullmatch(p) for p in parts) and all(
        _NUMBER.fullmatch(p) or _NAME.fullmatch(p) for p in parts
    )


def _is_word(run: str) -> bool:
    """A run with letters for at least half its characters, and not a Latin run no language
    would write (no vowel, not in capitals)."""
    if 2 * len(_LETTER.findall(run)) < len(run):
        return False
    bare = run.strip(".,:;!?()[]'\"")
    return not (_LATIN_WORD.match(bare) and not bare.isupper() and not _VOWEL.search(bare))


# A symbol-only word: no letter and no digit (``###``, ``!!!``, ``...``, ``@#$%``).
_SYMBOLS_ONLY = re.compile(r"^(?:[^\w]|_)+$")


# A junk tail: a good start, then runs no language writes to the end of the last line
# (``... plants convert light 3#@ 9 ad 00 ]] lkj 0x0x0x ;; ~~ ## 77 @@@@ qqq zzz 00``). Over
# the whole answer the good start dilutes every ratio; the tail alone is symbols and
# fragments. A word here is three letters or more with a vowel (``lkj``, ``qqq`` are not);
# anything outside ASCII ends the tail. Arithmetic's marks are not symbols of it.
JUNK_TAIL_RUNS = 12
JUNK_TAIL_SYMBOLS = 3
_TAIL_WORD = re.compile(r"[A-Za-z]*[aeiouyAEIOUY][A-Za-z]*")
_ARITHMETIC = frozenset(re.split(" ", "+ - = / * × ÷ -> => < > <= >= == | || && % ^"))


def junk_tail(text: str) -> bool:
    """Whether the prose's last line ends in :data:`JUNK_TAIL_RUNS` runs or more without a
    word, :data:`JUNK_TAIL_SYMBOLS` different symbol-only runs among them."""
    lines = [line for line in prose(text).splitlines() if line.strip()]
    tail: list[str] = []
    for run in reversed(lines[-1].split() if lines else []):
        letters = "".join(c for c in run if c.isascii() and c.isalpha())
        worded = len(letters) >= 3 and _TAIL_WORD.search(letters) and len(set(letters.lower())) > 1
        if worded or not run.isascii():
            break
        tail.append(run)
    if len(tail) < JUNK_TAIL_RUNS:
        return False
    symbols = {r for r in tail if _SYMBOLS_ONLY.match(r) and r not in _ARITHMETIC}
    return len(symbols) >= JUNK_TAIL_SYMBOLS


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


# Each gate reads the prose of the same answer: worked out once.
@functools.lru_cache(maxsize=64)
def prose(text: str, *, separators: bool = False) -> str:
    """``text`` without code, URLs and Markdown's marks, its separators made spaces (kept
    with ``separators``): what the noise statistics judge."""
    text = FENCE.sub(" ", unicodedata.normalize("NFKC", text))
    text = INLINE_CODE.sub(" ", text)
    text = URL.sub(" ", text)
    text = RULE_LINES.sub(" ", text)
    text = _LINE_MARKS.sub(" ", text)
    return text if separators else _SEPARATORS.sub(" ", text)


def noise_stats(text: str) -> NoiseStats | None:
    """The four statistics over ``text``'s prose, or None when too little of it is left.

    A word is a run with letters for at least half of its characters; a run with fewer,
    that is neither a number nor an operator, is noise."""
    words: list[str] = []
    noise: list[str] = []
    for run in _WORDS.findall(prose(text)):
        if _is_word(run):
            words.append(run)
        elif not is_figure(run) and not is_formula(run) and len(run) > OPERATOR_LENGTH:
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


# -- Gibberish the four statistics cannot see: its runs are letters, or figures. ------------

# Gopher's stop-word rule (datatrove 06c98b0, ``pipeline/filters/gopher_quality_filter.py``,
# ``min_stop_words``: two of the, be, to, of, and, that, have, with): a text in a Latin-script
# language uses its commonest function words. Chat answers are in many languages, so the
# list holds the commonest articles, prepositions, conjunctions and copulas of the widely
# written Latin-script ones
# (English, German, Dutch, the Nordic and Romance languages, Polish, Czech, Hungarian,
# Finnish, Turkish, Indonesian, Vietnamese, Tagalog, Swahili).
_STOP_WORDS = """the be to of and that have with a an in is it for on are was as or not this you
    i me my we our he him his she her they them their its at by from up out into over about
    than then so but if no all any some each one more most very just also only too there here
    which who what when where why how can could will would shall should may might must do
    does did done has had been being were am these those such own other same both many
    der die das und ist nicht ein eine zu mit von den dem auf für sie es im ich wir auch sich
    wie aber oder wenn noch nur so
    het een van dat op te zijn niet och att det som är og er på ikke
    le la les et est un une des du de que pas pour dans en il au je nous vous ils sur avec
    qui ce se ne sont mais ou
    el los las y es una por con para no se lo del al
    e è di che per non o os as é um não com do da em
    și în cu și pe nu
    w z na się nie jest i v je se ve že
    az és hogy nem ja on ei se että
    ve bir bu için ile da ne
    dan yang di ini itu dengan untuk
    và của là có không được trong cho với những các một
    ang ng sa mga ay
    na ya wa kwa ni"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
# A stretch of words in a row (no punctuation between them, each in lower case but the first)
# this long without a function word is no sentence of these languages; lists (one item a
# line, or commas between), titles and names in capitals (``Tokyo Osaka Kyoto``, code's
# ``StatefulSet``) make no such stretch. Gopher judges documents of 50 words and more.
STOP_WORDS_STRETCH = 12
# A stretch this long has its function words for a tenth of its words or more (English: a
# fifth).
STOP_WORDS_LONG_STRETCH = 16
_LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"
_LATIN_RUN = re.compile(f"[{_LATIN}]+")
# A word of a stretch, and the mark that ends the stretch after it.
_STRETCH_WORD = re.compile(f"^([{_LATIN}]+)([.,;:!?]?)$")
_JAPANESE = re.compile(f"[{_CJK}]")


def _line_stretches(line: str) -> list[list[str]]:
    """A line's runs of words in a row, broken by anything but a lower-case Latin word (the
    first may be capitalised) and after a punctuation mark."""
    found: list[list[str]] = []
    stretch: list[str] = []
    for token in line.split():
        word = _STRETCH_WORD.match(token)
        lower = word is not None and (word.group(1)[1:].islower() or len(word.group(1)) == 1)
        if word is None or not lower or (stretch and not word.group(1).islower()):
            found.append(stretch)
            stretch = [word.group(1)] if word and lower else []
            continue
        stretch.append(word.group(1))
        if word.group(2):
            found.append(stretch)
            stretch = []
    found.append(stretch)
    return [s for s in found if s]


# Gopher's rule over a paragraph: its clauses of this many words or more (a list's items and
# a heading are shorter, or one to a line), at least two on the line and this many words
# together, with function words for under this share of them. Prose has a fifth and more
# (a terse French sentence, 0.24), but the list holds only a language's commonest few, and a
# Vietnamese or Indonesian sentence can count under a sixth; syllables strung into words hit
# a short one now and then.
STOP_WORDS_CLAUSE = 4
STOP_WORDS_LINE = 12
STOP_WORDS_SHARE = 0.1
# English, whose function words the list holds nearly all of: its prose has a fifth and more,
# and real words in no order (``quantum onion policy therefore blue the swimming of``) a tenth
# to a fifth. Words only English writes among them say a stretch is English.
ENGLISH_STOP_WORDS_SHARE = 0.2
_ENGLISH_ONLY = frozenset(("the", "of", "and", "that", "with", "which", "from"))
_ENGLISH_AT_LEAST = 2


def _too_few(words: list[str]) -> bool:
    """Whether ``words`` (lower case) hold too few function words for their language."""
    stops = [w for w in words if w in STOP_WORDS]
    english = sum(w in _ENGLISH_ONLY for w in stops) >= _ENGLISH_AT_LEAST
    share = ENGLISH_STOP_WORDS_SHARE if english else STOP_WORDS_SHARE
    return len(stops) < share * len(words)


def _few_stop_words(clauses: list[list[str]]) -> bool:
    clauses = [c for c in clauses if len(c) >= STOP_WORDS_CLAUSE]
    words = [w.lower() for c in clauses for w in c]
    if len(clauses) < 2 or len(words) < STOP_WORDS_LINE:
        return False
    return _too_few(words)


def no_stop_words(text: str) -> bool:
    """``noise_stop_words``: a stretch of :data:`STOP_WORDS_STRETCH` words or more in a row
    with no function word (:data:`STOP_WORDS`) in it, one of :data:`STOP_WORDS_LONG_STRETCH`
    or more or a line of clauses with too few (:data:`STOP_WORDS_SHARE`); a text with
    Japanese in it (its Latin words are terms) is not judged."""
    if _JAPANESE.search(text):
        return False
    lines = [_line_stretches(line) for line in prose(text, separators=True).splitlines()]
    return any(_stretch_without_stop_words(s) for line in lines for s in line) or any(
        map(_few_stop_words, lines)
    )


# A determiner straight before a preposition, a conjunction or a copula (``the of``, ``its
# and``, ``the is``): English never writes it, while real words shuffled with function words
# sprinkled in (``invoice the of seventeen lantern``) do, which the share of function words
# above cannot tell from prose. ``a`` is left out: it names a variable (``if a or b``).
_DETERMINERS = frozenset(("the", "its", "their", "our", "my", "your"))
_NOT_AFTER_DETERMINER = frozenset(
    (
        *("of", "and", "the", "a", "an", "to", "in", "on", "at", "by", "for", "with", "from"),
        *("whom", "which", "whose", "if", "or", "but", "than", "is", "are", "was", "were"),
    )
)
# Twice in one answer: a typo makes one.
DETERMINER_PAIRS = 2
# A hyphenated word is one (``your to-do list``, ``the in-place sort``).
_ENGLISH_WORD = re.compile(r"[A-Za-z']+(?:-[A-Za-z']+)*|[^\sA-Za-z']")
# A keyword named as a thing of code: ``the if statement``, ``the for loop``, ``the in
# operator``.
_CODE_NOUNS = frozenset(
    (
        *("statement", "statements", "loop", "loops", "operator", "operators", "keyword"),
        *("keywords", "clause", "clauses", "block", "blocks", "branch", "branches"),
        *("expression", "expressions", "condition", "check", "part"),
    )
)


def determiner_pairs(text: str) -> bool:
    """``noise_stop_words`` too: :data:`DETERMINER_PAIRS` or more determiners followed by a
    word no noun phrase starts with (and no code noun after it: ``the if statement``)."""
    words = [w.lower() for w in _ENGLISH_WORD.findall(prose(text))] + [""]
    pairs = sum(
        1
        for a, b, c in zip(words, words[1:], words[2:], strict=False)
        if a in _DETERMINERS and b in _NOT_AFTER_DETERMINER and c not in _CODE_NOUNS
    )
    return pairs >= DETERMINER_PAIRS


def _stretch_without_stop_words(stretch: list[str]) -> bool:
    words = [w.lower() for w in stretch]
    if len(words) >= STOP_WORDS_STRETCH and not any(w in STOP_WORDS for w in words):
        return True
    # A long stretch with a function word or two in it: real words in no order, often after
    # a good start (``... add the package and then quietly neither yesterday river ...``).
    return len(words) >= STOP_WORDS_LONG_STRETCH and _too_few(words)


# A run of five consonant letters: no word of English has more than a few (``strengths``,
# ``matchstick``), and German, with ``sch`` and ``tz``, has it in about a quarter of the long
# words of its densest text; random letters, with a vowel for one letter in five, have it in
# most words. ``y`` counts as a vowel (``rhythm``), accented letters break a run.
_CONSONANT_RUN = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5}")
# The share of the Latin words of four letters or more, not in capitals (acronyms), with such a
# run, and how many words that must be at least (a name or two is no text).
CONSONANT_WORDS = 0.35
CONSONANT_WORDS_MIN = 5


def consonant_words(text: str) -> bool:
    """``noise_consonants``: over :data:`CONSONANT_WORDS` of the Latin words of four letters
    or more have five consonants in a row (random letters and keyboard mashing), counting
    every letter run of the prose (``d;lajk;jkkd`` is three)."""
    words = [w for w in _LATIN_RUN.findall(prose(text)) if len(w) >= 4 and not w.isupper()]
    hits = sum(1 for w in words if _CONSONANT_RUN.search(w))
    return hits >= CONSONANT_WORDS_MIN and hits > CONSONANT_WORDS * len(words)


# Neighbouring letters of a word in different scripts: a word is in one script, besides the
# kanji and kana of Japanese and the Latin words Japanese joins to them (``GitHubを``, one
# change in eight letters), or a Greek letter in a formula (``Δx``). Mixed-script soup
# changes script at most letters.
SCRIPT_CHANGES = 0.5
# Fewer letters than this are not judged (a formula of Greek and Latin variables).
SCRIPT_LETTERS = 20
_JAPANESE_NAMES = ("CJK", "HIRAGANA", "KATAKANA", "HALFWIDTH KATAKANA")


@functools.lru_cache(maxsize=4096)
def letter_script(ch: str) -> str | None:
    """The script of a letter by its Unicode name (``LATIN``, ``GREEK``, ``HANGUL``, ...),
    kanji and kana as one, None for a non-letter or a modifier (IPA's ``ː``)."""
    if not ch.isalpha():
        return None
    if ch.isascii():
        return "LATIN"
    name = unicodedata.name(ch, "")
    if name.startswith(_JAPANESE_NAMES):
        return "JAPANESE"
    head = name.split(" ", 1)[0]
    return None if head in ("", "MODIFIER") else head


def mixed_scripts(text: str) -> bool:
    """``noise_scripts``: within words, over :data:`SCRIPT_CHANGES` of the neighbouring
    letters are in different scripts."""
    pairs = changes = letters = 0
    for run in prose(text).split():
        scripts = [s for s in map(letter_script, run) if s]
        letters += len(scripts)
        pairs += max(0, len(scripts) - 1)
        changes += sum(1 for a, b in pairwise(scripts) if a != b)
    return letters >= SCRIPT_LETTERS and changes > SCRIPT_CHANGES * pairs


# Cyrillic and Greek letters drawn like Latin ones (``а``, ``е``, ``ο``, ``ѕ``, ``τ``), inside
# a word of Latin letters: homoglyphs, which a model writes when its tokens of two scripts
# blur (``Dоcker vоlume``), and which spam writes on purpose. A formula's Greek (``Δx``,
# ``πr``) is no look-alike, and a Russian word in an English sentence holds no Latin letter.
_LOOK_ALIKES = frozenset("аеорсухіѕјԁһԛԝкмтвнАВЕКМНОРСТХІЅЈοαειкνρτυχΑΒΕΗΙΚΜΝΟΡΤΥΧΖ")
# At least this many such words, and this share of the words with Latin letters.
LOOK_ALIKE_WORDS = 3
LOOK_ALIKE_SHARE = 0.1
_LETTER_WORD = re.compile(r"[^\W\d_]{3,}")


def look_alike_words(text: str) -> bool:
    """``noise_scripts`` too: :data:`LOOK_ALIKE_WORDS` or more words (and
    :data:`LOOK_ALIKE_SHARE` of the Latin ones) with a look-alike letter among Latin ones."""
    latin = [w for w in _LETTER_WORD.findall(prose(text)) if re.search("[A-Za-z]", w)]
    hits = sum(1 for w in latin if not _LOOK_ALIKES.isdisjoint(w))
    return hits >= LOOK_ALIKE_WORDS and hits >= LOOK_ALIKE_SHARE * len(latin)


# Words of many scripts on one line, none of them the line's own: a line that changes
# language every word or two. A sentence naming words of other languages ("thank you is
# ありがとう in Japanese, 감사합니다 in Korean") is mostly its own script, and a list of them
# puts one language on each line.
SOUP_SCRIPTS = 4
SOUP_TOP_SHARE = 0.6
# Scripts with fewer letters than this on the line are not counted (a Greek letter in a
# formula, a symbol's name).
_SOUP_SCRIPT_LETTERS = 2


def script_soup(text: str) -> bool:
    """``noise_scripts`` too: a line of at least :data:`SCRIPT_LETTERS` letters in
    :data:`SOUP_SCRIPTS` or more scripts, the most used holding under :data:`SOUP_TOP_SHARE`
    of them."""
    for line in prose(text).splitlines():
        letters = Counter(s for s in map(letter_script, line) if s)
        total = sum(letters.values())
        if total < SCRIPT_LETTERS:
            continue
        scripts = [n for n in letters.values() if n >= _SOUP_SCRIPT_LETTERS]
        if len(scripts) >= SOUP_SCRIPTS and max(scripts) < SOUP_TOP_SHARE * total:
            return True
    return False


# Numbers alone are an answer (``42``, a list of primes, a CSV table). Numbers that open with a
# zero are written so for a fixed width (bytes, PINs, codes), all of one width; numbers of
# several widths some of which are zero-padded, in no order, are random digits. From this
# many bare numbers, making at least half of the prose's runs.
DIGIT_RUNS = 10
_BARE_DIGITS = re.compile(r"^\d+$")
# Digits in a row past any measure's precision and any id an answer quotes (a 128-bit
# number has 39) and past what a user asks for (pi to 50 places): junk.
LONG_DIGITS = 100
_LONG_DIGITS = re.compile(rf"(?<![\w.])\d+(?:\.\d+)?(?![\w.])(?<=\d{{{LONG_DIGITS}}})")
# Fewer digits in a row, but a few digits over and over (``1989898989...``): no number
# anyone asks for is written so.
PERIODIC_DIGITS = 24
_DIGIT_RUN = re.compile(rf"\d{{{PERIODIC_DIGITS},}}")


def _periodic(run: str) -> bool:
    return len({run[i : i + 3] for i in range(len(run) - 2)}) <= 4


# Numbers and nothing else, this many or more: a dump (token ids, random floats, counting on
# and on) unless the prompt asks for figures (``asked.py`` waives it then).
MANY_FIGURES = 48
_FIGURE = re.compile(r"[-+]?(?:\d+(?:[.,]\d+)*|\.\d+)(?:[eE][-+]?\d+)?")


def many_figures(text: str) -> bool:
    """:data:`MANY_FIGURES` numbers or more, making nine tenths of the runs (split at spaces,
    commas and brackets)."""
    runs = [r for r in re.split(r"[\s,;\[\](){}]+", text) if r]
    figures = sum(1 for r in runs if _FIGURE.fullmatch(r))
    return figures >= MANY_FIGURES and figures * 10 >= len(runs) * 9


def digits_in_no_order(text: str) -> bool:
    """``noise_digits``: :data:`DIGIT_RUNS` bare numbers or more (split at spaces and colons)
    making half the runs, some zero-padded, of several widths and neither ascending nor
    descending (binary groups, digit groups); or one number of :data:`LONG_DIGITS` digits
    (``Answer: 3.14159...`` for hundreds of digits), or of :data:`PERIODIC_DIGITS` that
    repeat a few; or :func:`many_figures`. A Markdown table
    is judged a column at a time: its columns may each be in order or of one width (times,
    binary numbers, platforms) and still mix into no order row by row."""
    bare = prose(text)
    if _LONG_DIGITS.search(bare) or many_figures(text):
        return True
    if any(_periodic(m.group(0)) for m in _DIGIT_RUN.finditer(bare)):
        return True
    columns = _table_columns(text)
    if columns is not None:
        return any(_random_digits(_runs(" ".join(column))) for column in columns)
    # A thousands group (``1,024``) is no zero-padded number of its own.
    return _random_digits(_runs(prose(_THOUSANDS.sub("", text))))


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _runs(text: str) -> list[str]:
    return [
        r.strip(".,;!?()[]")
        for r in re.split(r"[\s:]+", text)
        if len(r) > OPERATOR_LENGTH or any(c.isalnum() for c in r)
    ]


def _random_digits(runs: list[str]) -> bool:
    numbers = [r for r in runs if _BARE_DIGITS.match(r)]
    if len(numbers) < DIGIT_RUNS or 2 * len(numbers) < len(runs):
        return False
    padded = any(len(n) > 1 and n[0] == "0" for n in numbers)
    values = [int(n) for n in numbers]
    ordered = values == sorted(values) or values == sorted(values, reverse=True)
    return padded and len(set(map(len, numbers))) > 1 and not ordered


_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$")


def _table_columns(text: str) -> list[list[str]] | None:
    """The cells of each column, where at least half of the text's lines are table rows
    (``| a | b |``); else None."""
    lines = [line for line in text.splitlines() if line.strip()]
    rows = [line for line in lines if _TABLE_ROW.match(line) and not RULE_LINES.match(line)]
    if len(rows) < 2 or 2 * len(rows) < len(lines):
        return None
    columns: dict[int, list[str]] = {}
    for row in rows:
        for i, cell in enumerate(row.strip().strip("|").split("|")):
            columns.setdefault(i, []).append(cell.strip())
    return list(columns.values())


# A hex dump: mostly runs of hex digits (bytes, offsets), a quarter of them mixing digits and
# letters (in random bytes, about half do; words of the letters a to f have no digit). From
# this many runs: a few bytes written out (``48 65 6c 6c 6f``) are an answer.
HEX_RUNS = 16
HEX_SHARE = 0.75
HEX_MIXED = 0.25
# A byte may be written ``0x5c`` (a C array), an offset ``00000010:`` (``xxd``).
_HEX_RUN = re.compile(r"^(?:0[xX])?([0-9a-fA-F]{2,}):?$")


def hex_dump(text: str) -> bool:
    """``noise_hex``: :data:`HEX_RUNS` runs or more, :data:`HEX_SHARE` of them hex and
    :data:`HEX_MIXED` of them mixing digits and letters."""
    runs = prose(text).split()
    if len(runs) < HEX_RUNS:
        return False
    hexes = [m.group(1) for r in runs if (m := _HEX_RUN.match(r))]
    mixed = sum(1 for r in hexes if not r.isdigit() and not r.isalpha())
    return len(hexes) >= HEX_SHARE * len(runs) and mixed >= HEX_MIXED * len(runs)


def noise_cause(text: str, config: GateConfig = DEFAULTS) -> str | None:
    """The first noise statistic ``text`` breaks (see :data:`NOISE_CAUSES`) that the config
    does not skip, else None."""
    stats = noise_stats(text)
    checks: dict[str, Callable[[], bool]] = {
        "noise_stop_words": lambda: (
            no_stop_words(text)
            or conjunctions_in_run(prose(text, separators=True))
            or determiner_pairs(text)
        ),
        "noise_consonants": lambda: consonant_words(text),
        "noise_scripts": lambda: mixed_scripts(text) or script_soup(text) or look_alike_words(text),
        "noise_digits": lambda: digits_in_no_order(text),
        "noise_hex": lambda: hex_dump(text),
        "noise_kana": lambda: kana_out_of_order(prose(text, separators=True)),
        "noise_particles": lambda: (
            stretch_without_particles(prose(text, separators=True))
            or lone_particles(prose(text, separators=True))
        ),
        "noise_escapes": lambda: byte_escapes(prose(text, separators=True)),
        "noise_tokens": lambda: (
            tokenizer_marks(prose(text, separators=True))
            or template_slots(text)
            or chat_roles(prose(text, separators=True))
        ),
        "noise_keyboard": lambda: keyboard_walks(prose(text, separators=True)),
        "noise_unfinished": lambda: unfinished(text),
        "noise_mojibake": lambda: mojibake(prose(text)),
        "noise_layout": lambda: layout(text),
    }
    if stats is not None:
        checks |= {
            "noise_words": lambda: stats.letter_words < config.noise_letter_words,
            "noise_symbols": lambda: (
                stats.symbols_per_word > config.noise_symbols_per_word or junk_tail(text)
            ),
            # One long word may be a name: only a very long one is judged alone.
            "noise_word_length": lambda: (
                stats.mean_word_length > config.noise_word_length
                and (stats.words > 1 or stats.mean_word_length > 2 * config.noise_word_length)
            ),
            "noise_chars": lambda: stats.noise_chars > config.noise_chars,
        }
    return next(
        (c for c in NOISE_CAUSES if c in checks and c not in config.skip and checks[c]()), None
    )
