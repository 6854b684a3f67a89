"""The gates and the scrubber on ``fixtures/heldout3`` (written without reading either), each
file split by line: the even lines were tuned on, the odd lines never shown to whoever tuned.
Run with ``-s`` for the table; the floors are the figures of 2026-12-06 (docs/datasets.md,
docs/hygiene.md), so a change that loses any of them fails here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib.gates.answers import gate
from model_foundry.lib.hygiene.record import RecordScrubber

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "heldout3"
HALVES = {"tuned": 0, "blind": 1}


@dataclass(frozen=True)
class Figures:
    noise_held: int
    noise: int
    good_kept: int
    good: int
    secrets_leaked: int
    secrets: int
    negatives_kept: int
    negatives: int


# The floors (held, kept) and ceilings (leaked) per half.
EXPECTED = {
    "tuned": Figures(87, 94, 107, 107, 0, 112, 112, 112),
    "blind": Figures(86, 93, 105, 107, 9, 100, 106, 107),
}


def _rows(name: str, half: int) -> list[dict[str, Any]]:
    lines = [line for line in (CORPUS / name).read_text().splitlines() if line.strip()]
    return [json.loads(line) for n, line in enumerate(lines) if n % 2 == half]


@cache
def _figures(half: str) -> Figures:
    at = HALVES[half]
    noise, good = _rows("noise.jsonl", at), _rows("good.jsonl", at)
    secrets, negatives = _rows("secrets.jsonl", at), _rows("negatives.jsonl", at)
    scrubber = RecordScrubber(salt=b"heldout3")
    scrubbed = [scrubber.scrub(r["text"])[0] for r in secrets]
    kept_text = [scrubber.scrub(r["text"])[0] for r in negatives]
    return Figures(
        noise_held=sum(1 for r in noise if gate(r["text"]) is not None),
        noise=len(noise),
        good_kept=sum(1 for r in good if gate(r["text"], prompt=r["prompt"]) is None),
        good=len(good),
        secrets_leaked=sum(
            1 for r, out in zip(secrets, scrubbed, strict=True) for s in r["secrets"] if s in out
        ),
        secrets=sum(len(r["secrets"]) for r in secrets),
        negatives_kept=sum(
            1 for r, out in zip(negatives, kept_text, strict=True) for k in r["keep"] if k in out
        ),
        negatives=sum(len(r["keep"]) for r in negatives),
    )


@pytest.mark.parametrize("half", list(HALVES))
def test_heldout3_figures_hold(half: str) -> None:
    got, floor = _figures(half), EXPECTED[half]
    print(f"\n{half}: {got}")
    assert (got.noise, got.good, got.secrets, got.negatives) == (
        floor.noise,
        floor.good,
        floor.secrets,
        floor.negatives,
    )
    assert got.noise_held >= floor.noise_held
    assert got.good_kept >= floor.good_kept
    assert got.secrets_leaked <= floor.secrets_leaked
    assert got.negatives_kept >= floor.negatives_kept
