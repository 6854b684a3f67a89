"""Noise gates for Japanese, whose junk the word statistics of ``noise.py`` cannot see: a run
of kanji, of hiragana or of katakana is a word there, so kana or kanji drawn at random make
words of a plausible length. Each gate reads the NFKC prose ``noise.prose`` leaves.

- ``noise_kana``: kana in an order no Japanese word has (a small ゃ after a kanji, ッ before a
  vowel, a voicing mark on a kana that takes none);
- ``noise_particles``: a long stretch of kanji and katakana with no hiragana in it: Japanese
  joins its kanji and katakana words with particles and endings written in hiragana;
- ``noise_stop_words`` (with English's function words in ``noise.py``): words drawn at
  random from a list, conjunctions among them, which Japanese sets off with punctuation.
"""

from __future__ import annotations

import re

# Hiragana and katakana letters (the long-vowel and middle-dot marks aside).
_KANA = re.compile(r"[\u3041-\u3096\u30a1-\u30fa]")
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]")
_KANJI = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3005]")
# Small ゃゅょ follow a kana of the i column (きゃ, しゅ) or, in loanwords, てゅ/でゅ/ふゅ/ゔゅ.
_SMALL_Y = frozenset("ゃゅょ")
_Y_BASES = frozenset("きしちにひみりぎじぢびぴてでふゔ")
# Small vowels follow a kana (ファ, ティ, casual すごぉい), never ん, っ or a small ゃゅょ.
_SMALL_VOWELS = frozenset("ぁぃぅぇぉゎ")
_NO_SMALL_VOWEL_AFTER = frozenset("んっゃゅょ")
# っ doubles the consonant after it: never before a vowel, ん, another small kana or ー.
_NO_SOKUON_BEFORE = frozenset("あいうえおんっゃゅょぁぃぅぇぉゎー")
# Katakana no word of today writes (ヲ, ヰ, ヱ), and ン, which opens no word.
_ODD_KATAKANA = frozenset("ヲヰヱ")
# A voicing mark left alone after NFKC: it sat on a kana that takes none (``ｱﾞ``, ``ﾏﾟ``).
_LONE_VOICING = frozenset("\u3099\u309a")

# The share of kana out of order over which a text is junk, and how many must be out of
# order at least. Written Japanese has none (a name in odd kana may have one); kana drawn
# at random put about one in ten out of order, mojibake (UTF-8 read as Shift_JIS) more.
KANA_MISFITS = 0.03
KANA_MISFITS_MIN = 3


def _hiragana(ch: str) -> str:
    """A katakana letter as its hiragana, anything else as it is."""
    return chr(ord(ch) - 0x60) if "\u30a1" <= ch <= "\u30f6" else ch


def _misfit(prev: str, ch: str, after: str) -> bool:
    """Whether kana ``ch``, between ``prev`` and ``after``, stands where no word has it."""
    kana = _hiragana(ch)
    if kana in _SMALL_Y:
        return _hiragana(prev) not in _Y_BASES
    if kana in _SMALL_VOWELS:
        return not _KANA.match(prev) or _hiragana(prev) in _NO_SMALL_VOWEL_AFTER
    if kana == "っ":
        # ッ in a katakana word, っ after a kana or a kanji's stem (言って).
        opener = _KATAKANA.match(prev) if ch == "ッ" else _KANA.match(prev) or _KANJI.match(prev)
        return not opener or _hiragana(after) in _NO_SOKUON_BEFORE
    if ch == "ン":
        return not _KATAKANA.match(prev)
    return ch in _ODD_KATAKANA


def kana_out_of_order(prose: str) -> bool:
    """``noise_kana``: over :data:`KANA_MISFITS` of the kana (and at least
    :data:`KANA_MISFITS_MIN`) stand where no Japanese word has them, lone voicing marks
    counted with them."""
    misfits = kana = 0
    for i, ch in enumerate(prose):
        if ch in _LONE_VOICING:
            misfits += 1
        elif _KANA.match(ch):
            kana += 1
            prev = prose[i - 1] if i else " "
            after = prose[i + 1] if i + 1 < len(prose) else " "
            misfits += _misfit(prev, ch, after)
    return misfits >= KANA_MISFITS_MIN and misfits > KANA_MISFITS * kana


# A stretch: kanji, kana, the long-vowel mark and digits with nothing between them (no space,
# no punctuation).
_STRETCH = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\u30050-9]+")
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
# Chinese joins its words with these, not with kana: a Chinese sentence is no junk.
_CHINESE_FUNCTION = frozenset("的是了在这们和不有个也都就")
# This many kanji and katakana (digits not counted) in a stretch without hiragana: the longest
# compounds have about 13 (情報処理安全確保支援士試験), a loanword about 18
# (オーケストレーションプラットフォーム); random kanji or katakana run on for dozens.
PARTICLE_STRETCH = 20


def stretch_without_particles(prose: str) -> bool:
    """``noise_particles``: a stretch of :data:`PARTICLE_STRETCH` kanji and katakana or more
    with no hiragana and no Chinese function character in it."""
    return any(
        len(stretch) - sum(c.isdigit() for c in stretch) >= PARTICLE_STRETCH
        and not _HIRAGANA.search(stretch)
        and not _CHINESE_FUNCTION.intersection(stretch)
        for stretch in _STRETCH.findall(prose)
    )


# Conjunctions that open a sentence or a clause: written Japanese puts a 。 or 、 before them
# or a 、 after (``しかし、``, ``簡単ですが、``). Word salad drops them mid-run (``雲しかも窓``).
# だから is left out: ``雨だから行かない`` joins a clause without a comma.
_CONJUNCTION_IN_RUN = re.compile(
    r"(?<=[^。、!?\s「『(:,.・])"
    r"(?:しかし|なぜなら|そして|それから|しかも|ところが|それで|ですが|けれども|すなわち|つまり)"
    r"(?=[^、。!?\s」』),.])"
)
_PUNCTUATED = re.compile(r"[。、!?\n]")
# This many such conjunctions within one run between punctuation marks: a run of prose may
# hold one (``安くてしかも速い``), salad drawn from a dozen words holds several.
CONJUNCTIONS_IN_RUN = 2


# A clause that is one particle and nothing else (``、の、が、を、``): Japanese puts a particle
# after its word, never alone between commas. This many in one text.
_LONE_PARTICLE = re.compile(r"(?<=[、,])[ \t]*[のがをにでへとはもや][ \t]*(?=[、,。])")
LONE_PARTICLES = 3


def lone_particles(prose: str) -> bool:
    """Japanese ``noise_particles`` too: :data:`LONE_PARTICLES` clauses or more that are a
    particle alone."""
    return len(_LONE_PARTICLE.findall(prose)) >= LONE_PARTICLES


def conjunctions_in_run(prose: str) -> bool:
    """Japanese ``noise_stop_words``: :data:`CONJUNCTIONS_IN_RUN` conjunctions or more
    inside one run of text with no punctuation, neither set off before nor after."""
    if not _HIRAGANA.search(prose):
        return False
    return any(
        len(_CONJUNCTION_IN_RUN.findall(run)) >= CONJUNCTIONS_IN_RUN
        for run in _PUNCTUATED.split(prose)
    )
