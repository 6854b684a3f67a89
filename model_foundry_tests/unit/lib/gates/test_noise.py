"""The noise gates on answers written by people who had read no gate code.

``fixtures/independent/`` (noise_answers, good_answers) was written first and the gates were
shaped on it; ``fixtures/heldout_answers/`` was written later by another author and first
measured after the gates existed; the misses it showed then were mended in general ways
(figures, hex hashes, paths and NFKC), so it is no longer held out either. The floors say what
the gates do on these files; ``docs/datasets.md`` gives the figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib.gates.answers import gate
from model_foundry.lib.gates.config import CAUSES, GateConfig, gate_settings
from model_foundry.lib.gates.noise import NOISE_CAUSES, noise_cause, noise_stats

FIXTURES = Path(__file__).parents[3] / "fixtures"


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _verdict(row: dict[str, Any]) -> str | None:
    return gate(row["answer"], prompt=row.get("prompt") or "")


def test_every_good_answer_is_kept() -> None:
    good = _load(FIXTURES / "independent" / "good_answers.jsonl")
    good += _load(FIXTURES / "heldout_answers" / "good.jsonl")
    assert not [(r["id"], _verdict(r)) for r in good if _verdict(r) in NOISE_CAUSES]
    # By every gate: one miss of 258, a product rule whose "sin x" comes four times in 95
    # characters (Gopher's top 2-gram share); figures, tables and chord charts are kept.
    held = [r["answer"] for r in good if _verdict(r) is not None]
    assert len(held) <= 1 and all("sin x" in a for a in held), held
    assert len(good) >= 250


def test_the_gate_corpora_answers_kept_stay_kept() -> None:
    rows = [
        r
        for name in ("corpus_a.jsonl", "corpus_b.jsonl")
        for r in _load(FIXTURES / "gate_answers" / name)
        if r["expected"] == "kept"
    ]
    assert [r["id"] for r in rows if noise_cause(r["answer"])] == []


def test_noise_is_held_back() -> None:
    noise = _load(FIXTURES / "independent" / "noise_answers.jsonl")
    held = sum(1 for r in noise if _verdict(r) is not None)
    # 85 of 86: the one kept is a line of emoji with two Japanese marks in it.
    assert held >= 85


def test_held_out_noise_recall_is_what_the_docs_say() -> None:
    noise = _load(FIXTURES / "heldout_answers" / "noise.jsonl")
    held = sum(1 for r in noise if _verdict(r) is not None)
    # 87 of 114: random consonant words, keyboard mashing, hex dumps, runs of binary digit
    # groups and letters of five scripts mixed pass these four statistics (docs/datasets.md).
    assert held >= 87


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("Sure. 83#4!5,6;7.8:9?0%1&2*,55;%$3@91!(0)?#27&.8^4[6]3~9/15|42<>", "noise_words"),
        ("はい。１２３！？＃＄％８９＠＆（）＊４１＃！？７＾＄２〜", "noise_chars"),
        (
            "the cat #### sat ???? on **** the &&&& mat @@@@ and $$$$ then %%%% slept",
            "noise_symbols",
        ),
        ("Here " + "qwXrtzPLmnbvcXzqwertyuKLMNBVCXzas " * 3, "noise_word_length"),
    ],
)
def test_each_statistic_has_its_own_cause(text: str, cause: str) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    "text",
    [
        "date,temp_c\n2026-11-01,7.6\n2026-11-02,19.1\n2026-11-03,6.5\n2026-11-04,2.3",
        "The checksum is 3f8a2c71e9b04d5a66c2f1e0b7d93a48c5e21f06ab7d49e38c10f5b2a6d7e914.",
        "Use this:\n```\n$ grep -E '^[0-9]{3}-[0-9]{4}$' *.txt | awk -F: '{print $1}'\n```",
        "About 48.8584° N, 2.2945° E.",
        "東京の人口は約1,400万人で、面積は2,194km²です。",
    ],
)
def test_figures_hashes_and_code_are_no_noise(text: str) -> None:
    assert noise_cause(text) is None


def test_too_little_text_is_not_judged() -> None:
    assert noise_stats("42!") is None
    assert noise_cause("ok ##") is None


def test_a_structured_answer_is_judged_by_its_schema_not_by_noise() -> None:
    answer = '{"a": [1, 2, 3], "b": {"c": null}, "d": "#$%^&*()!@#$%^&*"}'
    assert gate(answer, json_schema={"type": "object"}) is None


def test_thresholds_and_skips_come_from_the_gates_settings() -> None:
    text = "Sure. 83#4!5,6;7.8:9?0%1&2*,55;%$3@91!(0)?#27&.8^4[6]3~9/15|42<>"
    assert set(NOISE_CAUSES) <= set(CAUSES)
    loose = gate_settings("gates", {"noise_letter_words": 0.0, "noise_chars": 1.0})
    assert noise_cause(text, loose) is None
    skipped = GateConfig(skip=frozenset({"noise_words"}))
    assert noise_cause(text, skipped) == "noise_chars"


@pytest.mark.parametrize(
    "text",
    [
        "Served by ~gemma-4-26b-a4b-it-iq4_xs#578598582 on slot kindergarten",
        "Upgrade to v1.2.3-rc1 then pin torch==2.13.0+cpu and rerun build_42",
    ],
)
def test_model_names_versions_and_build_ids_are_no_noise(text: str) -> None:
    stats = noise_stats(text)
    assert stats is not None and stats.noise_chars == 0.0
    assert noise_cause(text) is None
