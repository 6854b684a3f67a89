"""``lib/words.py``: wordfreq's common words, kept as hashes in the cache for later processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry.lib import words


def test_known_words_made_up_ones_and_cut_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_CACHE", str(tmp_path))
    words._known.cache_clear()
    words._common.cache_clear()
    languages = words.LATIN + words.MORE
    assert words.known_word("Lantern", languages) and words.known_word("pöytä", languages)
    assert not words.known_word("kiraztarlası", languages)
    assert words.cut_word("anoth") and not words.cut_word("another")
    assert not words.cut_word("htop")  # no word, and the start of none
    cached = sorted(p.name for p in (tmp_path / "words").iterdir())
    assert [n.split("-wordfreq-")[0] for n in cached] == ["common", "known30000", "known30000"]
    # A later process reads the files: the same answers without wordfreq's lists.
    words._known.cache_clear()
    words._common.cache_clear()
    assert words.known_word("Lantern", languages) and words.cut_word("anoth")
