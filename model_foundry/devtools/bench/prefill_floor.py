"""The prefill floor of ``bench prefill``: the fewest prompt tokens a step could have computed.

A llama.cpp slot (``cache_prompt``, its host-RAM cache) and vLLM's prefix caching reuse an
exact prefix of what a server computed before. However requests are ordered, grouped or
pinned, a prompt must compute every token past the longest prefix it shares with some earlier
prompt on the same server, and at least one: llama-server evaluates the last prompt token
again when the whole prompt was cached, for its logits. With a cache that never forgets, the
fewest tokens over all orders is reached in sorted order, where the longest prefix a prompt
shares with any earlier one is the one it shares with the prompt just before it; the sum is
the number of nodes in the prompts' token trie, plus one for each repeated prompt.

The floor leaves out a reuse this workload never offers: a prompt that begins with an earlier
prompt followed by that request's answer (a conversation's next turn). It counts each attempt
as a prefill of its own, as ``bench prefill``'s slots send one request per sample: the later
choices of one request with ``n`` would compute nothing, not the one token counted here.

The prompts are tokenized the way the server counts them (``LlamaCpp.tokens``: its template's
rendering, then ``/tokenize``), from the requests the step stored, rendered as they were sent.
``tokenized`` is their total, to hold against the ``prompt_tokens`` the server reported: when
the two are equal, the floor counts the tokens the server saw.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from model_foundry.devtools.simulator.prompt_cache import common_prefix
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.slots.request import render
from model_foundry.lib.slots.runtimes import LLAMACPP, httpx, server_root


def prefill_floor(prompts: Iterable[Sequence[int]]) -> int:
    """The fewest tokens one server computes for ``prompts``, in any order, reusing exact
    prefixes of the prompts before (module docstring)."""
    total = 0
    before: tuple[int, ...] = ()
    for prompt in sorted(tuple(p) for p in prompts):
        total += max(1, len(prompt) - common_prefix(before, prompt))
        before = prompt
    return total


@dataclass(frozen=True)
class StepFloor:
    # What the step adds to the floor of the steps before it on the same servers (the run's
    # floor is their sum: a step may reuse what an earlier one left in a server's cache).
    floor: int
    tokenized: int  # its attempts' prompts as tokenized here, to hold against the reported


def _prompts(
    http: httpx.Client, db: Path, slot_file: SlotFile, attempts: list[Attempt]
) -> dict[str, list[list[int]]]:
    """The tokens of each attempt that reported its prompt tokens (the server prefilled it),
    rendered for the slot that answered it, by server."""
    counted = [a for a in attempts if a.prompt_tokens is not None]
    with duckdb.connect(str(db), read_only=True) as con:
        stored = dict(
            con.execute(
                "SELECT request_key, any_value([request, params]) FROM llm_completions "
                "WHERE request_key IN (SELECT unnest(?)) GROUP BY request_key",
                [sorted({a.key for a in counted})],
            ).fetchall()
        )
    by_server: dict[str, list[list[int]]] = defaultdict(list)
    for a in counted:
        request, params = stored[a.key]
        slot = slot_file.slots[a.slot]
        rendered = render(
            slot,
            Body(**json.loads(request)),
            json.loads(params or "{}"),
            thinking=slot_file.thinking_for_role(a.role),
        )
        root = server_root(slot.base_url)
        by_server[root].append(LLAMACPP.tokens(http, root, rendered.counted))
    return by_server


def run_floor(db: Path, slot_file: SlotFile, steps: list[list[Attempt]]) -> list[StepFloor]:
    """Each step's share of the floor of a run whose steps went one after another on
    ``db``, its servers still up (tokenizing prefills nothing)."""
    seen: dict[str, list[list[int]]] = defaultdict(list)
    out = []
    before = 0
    with httpx.Client(timeout=60) as http:
        for attempts in steps:
            prompts = _prompts(http, db, slot_file, attempts)
            for server, tokens in prompts.items():
                seen[server].extend(tokens)
            floor = sum(prefill_floor(p) for p in seen.values())
            tokenized = sum(len(t) for tokens in prompts.values() for t in tokens)
            out.append(StepFloor(floor - before, tokenized))
            before = floor
    return out


__all__ = ["StepFloor", "prefill_floor", "run_floor"]
