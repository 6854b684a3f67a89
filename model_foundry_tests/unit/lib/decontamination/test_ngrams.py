"""Normalised tokens and hashed n-grams: case, spacing and punctuation never matter."""

from __future__ import annotations

import numpy as np

from model_foundry.lib.decontamination.ngrams import (
    batch_windows,
    token_hashes,
    tokens,
    window_hashes,
)


def test_case_spacing_punctuation_and_full_width_do_not_change_the_tokens() -> None:
    plain = tokens("def add(a, b):\n    return a + b")
    assert plain == ["def", "add", "a", "b", "return", "a", "b"]
    assert tokens("DEF   ADD(A,B):  RETURN A+B") == plain
    assert tokens("ＤＥＦ ａｄｄ（ａ，ｂ）： return a + b") == plain


def test_japanese_is_one_token_a_character_and_spaces_between_them_vanish() -> None:
    assert tokens("日本の川。") == ["日", "本", "の", "川"]
    assert tokens("日 本 の 川 。") == tokens("日本の川。")
    # Latin words inside Japanese stay words.
    assert tokens("Pythonで書く") == ["python", "で", "書", "く"]


def test_snake_case_identifiers_are_one_word() -> None:
    assert tokens("interleave_halves(items)") == ["interleave_halves", "items"]


def test_window_hashes_depend_on_order_and_length_and_are_stable() -> None:
    h = token_hashes(["a", "b", "c", "d"])
    again = token_hashes(["a", "b", "c", "d"])
    assert (h == again).all() and len(set(h.tolist())) == 4
    two = window_hashes(h, 2)
    assert len(two) == 3 and len(set(two.tolist())) == 3
    swapped = window_hashes(token_hashes(["b", "a"]), 2)
    assert swapped[0] != two[0]
    # The same tokens as a window of another length hash differently.
    assert window_hashes(h[:2], 2)[0] == two[0]
    assert set(window_hashes(h, 3).tolist()).isdisjoint(two.tolist())
    assert len(window_hashes(h, 5)) == 0


def test_batch_windows_never_span_two_texts() -> None:
    words = [["a", "b", "c"], ["d"], [], ["e", "f"]]
    ends = np.cumsum([len(w) for w in words])
    flat = token_hashes([t for w in words for t in w])
    hashes, text, start = batch_windows(flat, ends, 2)
    assert text.tolist() == [0, 0, 3] and start.tolist() == [0, 1, 0]
    assert hashes[2] == window_hashes(token_hashes(["e", "f"]), 2)[0]
