"""Context windows, fit routing and chunking without a real model server: the unit tests."""

from __future__ import annotations

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.context import (
    ESTIMATE_PER_MESSAGE,
    estimate_tokens,
    max_model_len_from_models,
    n_ctx_from_props,
    server_root,
)
from model_foundry.lib.summaries.chunks import Chunk, Piece, PieceTooLong, cut_to_fit, pack


def test_estimate_never_undercounts_a_byte_tokenizer() -> None:
    # One token per UTF-8 byte is the most a byte-fallback tokenizer can produce.
    assert estimate_tokens(Body(prompt="abc")) == 4
    assert estimate_tokens(Body(prompt="日本")) == 7  # 6 bytes + 1
    msgs = [{"role": "system", "content": "ab"}, {"role": "user", "content": "c"}]
    assert estimate_tokens(Body(messages=msgs)) == 3 + 3 * ESTIMATE_PER_MESSAGE


def test_window_from_each_runtime_shape() -> None:
    assert n_ctx_from_props({"default_generation_settings": {"n_ctx": 819}}) == 819
    assert n_ctx_from_props({"default_generation_settings": {}}) is None
    assert n_ctx_from_props({}) is None
    models = {"data": [{"id": "a", "max_model_len": 2048}, {"id": "b", "max_model_len": 4096}]}
    assert max_model_len_from_models(models, "b") == 4096
    assert max_model_len_from_models(models, "missing") is None
    assert max_model_len_from_models({"data": [{"id": "x", "max_model_len": 8192}]}, "y") == 8192
    assert server_root("http://h:1/v1") == "http://h:1"
    assert server_root("http://h:1/v1/") == "http://h:1"


def test_packing_is_greedy_stable_and_within_budget() -> None:
    def count(text: str) -> int:
        return len(text)

    pieces = [Piece(i + 1, "x" * n) for i, n in enumerate([4, 4, 4, 9, 2, 2])]
    chunks = pack(pieces, 10, count)
    assert [[p.number for p in c.pieces] for c in chunks] == [[1, 2], [3], [4], [5, 6]]
    for c in chunks:
        assert len(c.text()) <= 10
    # Appending pieces leaves every complete earlier chunk as it was (keys repeat on rerun).
    more = pack([*pieces, Piece(7, "y" * 3), Piece(8, "z" * 8)], 10, count)
    assert more[:3] == chunks[:3]
    # A piece longer than the budget is cut, marked, and fits.
    cut = cut_to_fit(Piece(1, "w" * 50), 10, count)
    assert len(cut.text) <= 10 and cut.text.endswith("…")
    # The real-prompt check takes pieces back from a group that does not fit.
    checked = pack(pieces, 10, count, fits=lambda c: len(c.pieces) == 1)
    assert all(len(c.pieces) == 1 for c in checked) and len(checked) == 6


def test_packing_with_no_room_says_so() -> None:
    try:
        pack([Piece(1, "x")], 0, len)
    except PieceTooLong as exc:
        assert "no room" in str(exc)
    else:
        raise AssertionError("expected PieceTooLong")
    assert Chunk((Piece(3, "a"), Piece(5, "b"))).first == 3
