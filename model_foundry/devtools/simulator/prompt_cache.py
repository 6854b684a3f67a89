"""What each place of a simulated llama.cpp server holds in its cache, and how much of the
next prompt it can reuse.

Modelled on ``llama-server`` as vendored in llama-cpp-python 0.3.36
(``tools/server/server-context.cpp``):

- each of the ``--parallel`` places keeps the tokens of the last request it ran (prompt and
  answer);
- a request goes to the idle place whose tokens share the longest common prefix with its
  prompt, if that prefix is more than ``--slot-prompt-similarity`` (0.1) of the prompt;
  otherwise to the idle place used least recently (``get_available_slot``);
- the prefix it shares with that place is reused, except the prompt's last token, which is
  always computed ("need to evaluate at least 1 token"): that count is ``timings.cache_n``.

The host-RAM prompt cache (``--cache-ram``), context shifting and sliding-window checkpoints
are not modelled: a prompt reuses only what its own place holds.
"""

from __future__ import annotations

from collections.abc import Sequence

# llama-server's default --slot-prompt-similarity (common/common.h).
SLOT_PROMPT_SIMILARITY = 0.1


def common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PromptCache:
    """The tokens each of ``parallel`` places holds, and when each was last used."""

    def __init__(self, parallel: int, similarity: float = SLOT_PROMPT_SIMILARITY) -> None:
        self.similarity = similarity
        self.held: list[tuple[str, ...]] = [() for _ in range(parallel)]
        self._last_used = [0] * parallel
        self._clock = 0

    def choose(self, free: Sequence[int], prompt: Sequence[str]) -> int:
        """The free place ``prompt`` goes to: the most similar one, else the least recently
        used (among equals the last in id order: llama-server's scan keeps the last slot whose
        ``t_last_used`` is at most the best so far)."""
        best, best_share = None, 0.0
        for place in free:
            if not self.held[place] or not prompt:
                continue
            share = common_prefix(self.held[place], prompt) / len(prompt)
            if share > best_share and share > self.similarity:
                best, best_share = place, share
        if best is not None:
            return best
        return min(free, key=lambda place: (self._last_used[place], -place))

    def reuse(self, place: int, prompt: Sequence[str], answer: Sequence[str] = ()) -> int:
        """The tokens of ``prompt`` that ``place`` holds already (``cache_n``); the place then
        holds ``prompt`` and its ``answer``."""
        cached = common_prefix(self.held[place], prompt)
        if cached == len(prompt) and cached > 0:
            cached -= 1
        self.held[place] = (*prompt, *answer)
        self._clock += 1
        self._last_used[place] = self._clock
        return cached

    def copy(self, place: int, tokens: Sequence[str]) -> None:
        """``place`` now holds ``tokens`` without computing them: a choice of an ``n``
        request, whose prompt's state was copied from the first choice's place."""
        self.held[place] = tuple(tokens)
        self._clock += 1
        self._last_used[place] = self._clock


__all__ = ["SLOT_PROMPT_SIMILARITY", "PromptCache", "common_prefix"]
