"""Context windows, fit routing and chunking without a real model server.

The windows here come from ``context_tokens`` in the slot file (or the simulator's stated
default window) and the counts from the conservative estimate or the simulator's stated
tokenizer (``devtools/simulator/tokenizer.py``), so every number is known and the tests are
deterministic. ``system/test_real_llama.py`` runs the same code against a real
llama-server's ``/props`` and ``/tokenize``.

What the unit, integration and system tests of ``lib/slots/test_context_fit.py`` share."""

from __future__ import annotations

from model_foundry_tests.slot_fixtures import shipped_data


def windows(kindergarten: int | None, naughty: int | None) -> dict:
    data = shipped_data()
    if kindergarten is not None:
        data["slots"]["kindergarten"]["context_tokens"] = kindergarten
    if naughty is not None:
        data["slots"]["naughty"]["context_tokens"] = naughty
    for s in data["slots"].values():
        s["request_defaults"]["max_tokens"] = 100
    return data
