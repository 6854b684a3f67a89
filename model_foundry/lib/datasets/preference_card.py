"""The card's part on a judged version's ``preference`` config, and its win rates table.

The sample export hands it to the card (``lib/exports/card.py`` knows none of its callers);
the judgements asset and ``dataset judge`` show the same table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from model_foundry.lib.exports.card import ExportFigures, counts_text


def win_rate_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Each model's win rate against each other model, per prompt language, as Markdown."""
    if not rows:
        return "No agreed judgements between different models yet."
    lines = [
        "| language | model | opponent | comparisons | wins | losses | ties | win rate |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        rate = "n/a" if r["win_rate"] is None else f"{r['win_rate']:.3f}"
        lines.append(
            f"| {r['language']} | {r['model']} | {r['opponent']} | {r['comparisons']} | "
            f"{r['wins']} | {r['losses']} | {r['ties']} | {rate} |"
        )
    return "\n".join(lines)


def preference_section(figures: ExportFigures) -> str:
    """The card's part on the ``preference`` config: the judge, agreement, ties, pairs."""
    p = figures.preference
    if p is None:
        return ""
    rate = "n/a" if p["agreement_rate"] is None else f"{p['agreement_rate']:.1%}"
    rows = figures.configs.get("preference", {})
    pairings = counts_text(p["pairs_by_pairing"])
    return f"""
## Preference pairs (`preference` config)

Each prompt's answers were compared two at a time by a judge model, each comparison asked
twice with the answers swapped. A pair is kept only when both orders chose the same answer.

- Judge model: {", ".join(p["judge_models"]) or "none"}.
- Comparisons: {p["comparisons"]}; both orders parsed: {p["both_parsed"]}; agreement rate:
  {rate}; ties (the orders disagreed, or scored both answers equal): {p["ties"]};
  comparisons with an unparsed judge answer: {p["with_unparsed"]}; pairs held back by the
  quality gates: {counts_text(p.get("held_back_by_gate") or {})}.
- Pairs per split: {counts_text(rows)}. Pairs per model pairing: {pairings}.
- Each pair takes its prompt's split, so no prompt in test has a pair in train.

Columns: `prompt` (messages), `chosen` and `rejected` (one assistant message each), as in
TRL's conversational preference format; `score_chosen` and `score_rejected` (1-10, the mean
over both orders), `model_chosen`, `model_rejected` and `judge_model`.
`openai/preference/<split>.jsonl` holds the same pairs in OpenAI's preference fine-tuning
format. Load it with `load_dataset("path/to/{figures.dataset}/{figures.version}",
"preference")`.

Win rates from the agreed judgements:

{win_rate_table(p["win_rates"])}
"""


__all__ = ["preference_section", "win_rate_table"]
