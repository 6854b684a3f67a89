"""Preference pairs from a version's judgements: agreement, ties, win rates and DPO records.

A comparison is a pair when its judge recipe cell names a winner (the pairwise judge's rule,
``lib/recipes/columns/judge.py``: both orders prefer the same answer). A cell that names none
is a *tie*: reported, never a pair (the judge's position bias showed). A comparison whose cell
was held back (an order did not parse) is neither. The agreement rate is pairs / comparisons
with both orders parsed.

A pair's record follows TRL's conversational preference format: ``prompt`` (the prompt's
messages), ``chosen`` and ``rejected`` (one assistant message each), with the scores (each
answer's mean over both asks), the two models and the judge model beside them. Each pair
takes its prompt group's stored split, the one its samples were exported with, so no prompt
in test has a pair in train.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.tables.base import fetch
from model_foundry.lib.tables.judgements import JUDGED_PAIRS_SQL, comparison_id

_PAIRS = f"""
WITH judged AS ({JUDGED_PAIRS_SQL})
SELECT j.prompt_id, j.language, j.answer_a, j.answer_b, j.model_a, j.model_b, j.judge_model,
       j.winner, j.score_a, j.score_b, sa.messages::VARCHAR AS messages,
       sa.response AS response_a, sb.response AS response_b
FROM judged j
JOIN dataset_samples sa
  ON sa.dataset = j.dataset AND sa.version = j.version AND sa.request_key = j.answer_a
JOIN dataset_samples sb
  ON sb.dataset = j.dataset AND sb.version = j.version AND sb.request_key = j.answer_b
WHERE j.dataset = ? AND j.version = ? AND j.winner IN ('a', 'b')
ORDER BY j.prompt_id, j.answer_a, j.answer_b
"""

_FIGURES = f"""
WITH judged AS ({JUDGED_PAIRS_SQL})
SELECT count(*) AS comparisons,
       count(*) FILTER (WHERE winner IS NOT NULL) AS both_parsed,
       count(*) FILTER (WHERE winner IN ('a', 'b')) AS agreed,
       count(*) FILTER (WHERE winner IS NULL) AS with_unparsed,
       list(DISTINCT judge_model) AS judge_models
FROM judged WHERE dataset = ? AND version = ?
"""

_PAIRINGS = f"""
WITH judged AS ({JUDGED_PAIRS_SQL})
SELECT least(model_a, model_b) AS one, greatest(model_a, model_b) AS other, count(*) AS pairs
FROM judged
WHERE dataset = ? AND version = ? AND winner IN ('a', 'b')
GROUP BY ALL ORDER BY ALL
"""

_WIN_RATES = """
SELECT language, model, opponent, comparisons, wins, losses, ties, win_rate
FROM model_preferences WHERE dataset = ? AND version = ?
ORDER BY language, model, opponent
"""


@dataclass
class PreferenceFigures:
    """What a version's judgements came to, for the card, the manifest and the metadata."""

    judge_models: list[str] = field(default_factory=list)
    comparisons: int = 0
    both_parsed: int = 0
    pairs: int = 0
    ties: int = 0
    with_unparsed: int = 0
    agreement_rate: float | None = None
    pairs_by_pairing: dict[str, int] = field(default_factory=dict)
    # One row per language, model and opponent: comparisons, wins, losses, ties, win_rate.
    win_rates: list[dict[str, Any]] = field(default_factory=list)
    pairs_by_split: dict[str, int] = field(default_factory=dict)
    # Markers the pairs' text got in the export (the same text as the samples', scrubbed
    # again because a pair is written on its own).
    redactions_by_kind: dict[str, int] = field(default_factory=dict)
    # Agreed pairs left out because an answer failed a quality gate, per cause (gates.py).
    held_back_by_gate: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def preference_figures(db_path: str | Path, name: str, version: str) -> PreferenceFigures:
    with storage.connect(db_path) as con:
        found = con.execute(_FIGURES, [name, version]).fetchone()
        pairings = con.execute(_PAIRINGS, [name, version]).fetchall()
        rates = fetch(con, dict, _WIN_RATES, [name, version])
    comparisons, both, agreed, unparsed, judges = found or (0, 0, 0, 0, [])
    return PreferenceFigures(
        judge_models=sorted(m for m in judges or [] if m),
        comparisons=int(comparisons),
        both_parsed=int(both),
        pairs=int(agreed),
        ties=int(both) - int(agreed),
        with_unparsed=int(unparsed),
        agreement_rate=round(agreed / both, 3) if both else None,
        pairs_by_pairing={f"{one} vs {other}": int(n) for one, other, n in pairings},
        win_rates=rates,
    )


def _assistant(content: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": content}]


def pair_records(
    db_path: str | Path, name: str, version: str, split_of: Mapping[str, str]
) -> Iterator[dict[str, Any]]:
    """Each agreed pair of ``name``/``version`` as a preference record with ``split`` (its
    prompt group's, from ``split_of``; a prompt with no stored split has no pair)."""
    with storage.connect(db_path) as con:
        cursor = con.execute(_PAIRS, [name, version])
        columns = [d[0] for d in cursor.description]
        while rows := cursor.fetchmany(1000):
            for values in rows:
                r = dict(zip(columns, values, strict=True))
                split = split_of.get(r["prompt_id"])
                if split is None:
                    continue
                a_won = r["winner"] == "a"
                yield {
                    "id": comparison_id(r["answer_a"], r["answer_b"]),
                    "prompt_id": r["prompt_id"],
                    "language": r["language"],
                    "prompt": [
                        {"role": m["role"], "content": m.get("content") or ""}
                        for m in json.loads(r["messages"])
                    ],
                    "chosen": _assistant(r["response_a"] if a_won else r["response_b"]),
                    "rejected": _assistant(r["response_b"] if a_won else r["response_a"]),
                    "score_chosen": float(r["score_a"] if a_won else r["score_b"]),
                    "score_rejected": float(r["score_b"] if a_won else r["score_a"]),
                    "model_chosen": r["model_a"] if a_won else r["model_b"],
                    "model_rejected": r["model_b"] if a_won else r["model_a"],
                    "judge_model": r["judge_model"],
                    "split": split,
                }


def preference_line(figures: PreferenceFigures) -> str:
    rate = "n/a" if figures.agreement_rate is None else f"{figures.agreement_rate:.1%}"
    pairings = Counter(figures.pairs_by_pairing)
    by = ", ".join(f"{k}: {v}" for k, v in sorted(pairings.items())) or "none"
    return (
        f"judge {', '.join(figures.judge_models) or 'none'}: {figures.pairs} preference pairs "
        f"from {figures.comparisons} comparisons, agreement {rate} of "
        f"{figures.both_parsed} with both orders parsed, {figures.ties} ties, "
        f"{figures.with_unparsed} with an unparsed answer; pairs by pairing: {by}"
    )


__all__ = [
    "PreferenceFigures",
    "pair_records",
    "preference_figures",
    "preference_line",
]
