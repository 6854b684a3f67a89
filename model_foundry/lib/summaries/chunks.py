"""Splitting a session too long for one prompt into parts that each fit (pure logic).

Parts are cut greedily from the start of the session, so appending messages to a session
leaves its earlier parts byte for byte the same: their request keys repeat, and a rerun
answers them from the completions store and sends only the parts that changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    """One item to pack: a transcript line (level 1) or a part summary (higher levels)."""

    number: int  # 1-based position in the session (message) or in the level below (part)
    text: str


@dataclass(frozen=True)
class Chunk:
    pieces: tuple[Piece, ...]

    @property
    def first(self) -> int:
        return self.pieces[0].number

    @property
    def last(self) -> int:
        return self.pieces[-1].number

    def text(self) -> str:
        return "\n".join(p.text for p in self.pieces)


class PieceTooLong(ValueError):
    """A single piece does not fit even after cutting (the instruction alone fills the window)."""


def cut_to_fit(piece: Piece, budget: int, count: Callable[[str], int]) -> Piece:
    """``piece`` shortened (marked with an ellipsis) until ``count`` says it fits ``budget``."""
    text = piece.text
    tokens = count(text)
    while tokens > budget:
        if len(text) <= 1:
            raise PieceTooLong(f"item {piece.number} cannot fit in {budget} tokens")
        # Shrink in proportion, a little more than needed, so it converges in a few steps.
        keep = max(1, min(len(text) - 1, int(len(text) * budget / tokens * 0.9)))
        text = text[:keep].rstrip() + "…"
        tokens = count(text)
    return Piece(piece.number, text)


def pack(
    pieces: Sequence[Piece],
    budget: int,
    count: Callable[[str], int],
    fits: Callable[[Chunk], bool] | None = None,
) -> list[Chunk]:
    """Consecutive pieces grouped greedily, each group's text within ``budget`` tokens.

    ``count`` gives a text's tokens (one call per piece; joining adds one newline token,
    counted as one). ``fits`` checks a finished group's real rendered prompt (the template
    may add what per-piece counts miss); a group that fails it gives back its last piece
    to the next group.
    """
    if budget < 1:
        raise PieceTooLong(f"no room for any text (budget {budget} tokens)")
    sized = []
    for p in pieces:
        n = count(p.text)
        if n > budget:
            p = cut_to_fit(p, budget, count)
            n = count(p.text)
        sized.append((p, n))
    chunks: list[Chunk] = []
    i = 0
    while i < len(sized):
        group: list[Piece] = []
        used = 0
        while i < len(sized):
            piece, n = sized[i]
            extra = n + (1 if group else 0)
            if group and used + extra > budget:
                break
            group.append(piece)
            used += extra
            i += 1
        while fits is not None and len(group) > 1 and not fits(Chunk(tuple(group))):
            group.pop()
            i -= 1
        chunks.append(Chunk(tuple(group)))
    return chunks


__all__ = ["Chunk", "Piece", "PieceTooLong", "cut_to_fit", "pack"]
