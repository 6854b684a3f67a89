"""The prefill floor of ``bench prefill``: the fewest prompt tokens one server computes for a
set of prompts in any order, reusing exact prefixes of the prompts before."""

from __future__ import annotations

import itertools
import random

from model_foundry.devtools.bench.prefill_floor import prefill_floor


def _in_order(prompts: list[tuple[int, ...]]) -> int:
    """What a server with a cache that forgets nothing computes for ``prompts`` in this
    order: each prompt past its longest prefix shared with an earlier one, at least one."""
    total = 0
    for i, p in enumerate(prompts):
        shared = 0
        for q in prompts[:i]:
            n = 0
            while n < min(len(p), len(q)) and p[n] == q[n]:
                n += 1
            shared = max(shared, n)
        total += max(1, len(p) - shared)
    return total


def test_samples_of_one_prompt_compute_it_once_and_one_token_each_after() -> None:
    prompt = tuple(range(300))
    assert prefill_floor([prompt] * 4) == 300 + 3


def test_a_shared_head_is_computed_once() -> None:
    head = (1, 2, 3, 4, 5)
    # A prefix of a later prompt is no repeat: the longer one computes only its tail.
    assert prefill_floor([(*head, 9, 9), (*head, 8), head]) == 5 + 2 + 1


def test_the_floor_is_the_least_over_every_order() -> None:
    rng = random.Random(30)
    for _ in range(200):
        prompts = [
            tuple(rng.choice((1, 2, 3)) for _ in range(rng.randint(1, 6)))
            for _ in range(rng.randint(1, 5))
        ]
        least = min(_in_order(list(order)) for order in itertools.permutations(prompts))
        assert prefill_floor(prompts) == least, prompts


def test_no_prompts_compute_nothing() -> None:
    assert prefill_floor([]) == 0
