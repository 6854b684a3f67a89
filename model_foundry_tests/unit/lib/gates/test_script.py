"""The one language detector: every kana letter, half-width or not, the prolonged sound marks
and kanji count as Japanese, the punctuation in the same blocks does not."""

from __future__ import annotations

import unicodedata

import pytest

from model_foundry.lib.gates.script import (
    WORD,
    detect_language,
    languages,
    script_share,
    scripts,
)

# The kana blocks, full- and half-width (the half-width forms block holds the Japanese
# punctuation U+FF61-FF65 as well).
_KANA_BLOCKS = [*range(0x3040, 0x3100), *range(0x31F0, 0x3200), *range(0xFF61, 0xFFA0)]


def test_every_kana_letter_and_mark_is_japanese_and_its_punctuation_is_not() -> None:
    counted, punctuation = 0, 0
    for cp in _KANA_BLOCKS:
        char = chr(cp)
        category = unicodedata.category(char)
        if category == "Cn":  # unassigned
            continue
        found = scripts(char).japanese
        if category.startswith("P"):
            assert found == 0, f"U+{cp:04X} {unicodedata.name(char)} is punctuation"
            punctuation += 1
        else:
            # Each character of its NFKC form: ゟ is より, the spacing voicing mark a space
            # and the combining one.
            form = unicodedata.normalize("NFKC", char).strip()
            assert found == len(form) >= 1, f"U+{cp:04X} {unicodedata.name(char)} is not counted"
            counted += 1
    # ゠ ・ and the half-width 。「」、・ are the punctuation; the rest are kana and marks.
    assert punctuation == 7
    assert counted > 250


@pytest.mark.parametrize(
    ("text", "japanese"),
    [
        ("ひらがな", 4),
        ("カタカナ", 4),
        ("ｶﾀｶﾅ", 4),  # half-width katakana
        ("コーヒー", 4),  # the prolonged sound mark
        ("ｺｰﾋｰ", 4),  # and its half-width form
        ("すごーい", 4),  # after hiragana too
        ("ｶﾞｷﾞ", 2),  # a half-width voicing mark joins its kana under NFKC
        ("漢字", 2),
        ("人々", 2),  # the kanji iteration mark
        ("㐀", 1),  # extension A
        ("𠮷野家", 3),  # extension B, outside the basic plane
        ("〇", 1),
        ("「東京・大阪」、。", 4),  # brackets, the middle dot and stops are not letters
        ("Hello, 世界", 2),
    ],
)
def test_japanese_characters_are_counted(text: str, japanese: int) -> None:
    assert scripts(text).japanese == japanese


def test_latin_is_counted_after_nfkc_and_other_scripts_apart() -> None:
    found = scripts("Ｈｅｌｌｏ wörld 안녕 мир 42")
    assert (found.latin_words, found.latin_letters, found.other_words) == (2, 10, 2)
    assert found.japanese == 0


def test_detect_language_needs_a_fifth_of_the_letters_in_japanese() -> None:
    assert detect_language("DuckDB のロック競合を避ける方法を教えてください。") == "ja"
    assert detect_language("ｺｰﾋｰを飲む") == "ja"
    assert detect_language("Refactor the DuckDB writer.") == "en"
    # Two kana among 29 Latin letters is under a fifth.
    assert detect_language("Refactor the DuckDB writer in main ok です") == "en"
    assert detect_language("") == "en"


def test_languages_of_a_card() -> None:
    assert languages(["hello world"]) == ["en"]
    assert languages(["ｺｰﾋｰ"]) == ["ja"]
    assert languages(["ok 42", "・。"]) == []
    assert languages(["日本語のtext"]) == ["en", "ja"]


def test_script_share_of_a_translation() -> None:
    assert script_share("ｺｰﾋｰを飲む", "ja") == 1.0
    assert script_share("Ｈｅｌｌｏ ｗｏｒｌｄ", "en") == 1.0
    assert script_share("안녕하세요 world", "en") == 0.5
    assert script_share("123 !!", "ja") is None
    assert script_share("bonjour", "fr") is None


def test_words_are_runs_of_one_script() -> None:
    assert WORD.findall("コーヒーを飲む") == ["コーヒー", "を", "飲", "む"]
    assert WORD.findall("東京・大阪") == ["東京", "大阪"]
    assert WORD.findall("ｺｰﾋｰ and tea") == ["ｺｰﾋｰ", "and", "tea"]
