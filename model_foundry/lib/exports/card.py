"""The dataset card (``README.md`` with the Hub's YAML header) and its figures.

The header lists each config's ``data_files`` per split (the ``hf/`` Parquet files), the
languages found in the text, the task, the size category, tags and the license: the one
given, else ``unknown`` (never guessed). The body says what is in the export and how it was
made, how to load it and the command that publishes the folder as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from model_foundry.lib.exports.layouts import Layout

_KANA_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"\b[A-Za-z]{3,}\b")
_SIZES = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]


def size_category(n: int) -> str:
    for bound, name in _SIZES:
        if n < bound:
            return name
    return "1M<n<10M" if n < 10_000_000 else "10M<n<100M"


def languages(texts: Sequence[str]) -> list[str]:
    """The languages the text shows: Japanese by its script, English by Latin words."""
    found = set()
    for text in texts:
        if "ja" not in found and _KANA_KANJI.search(text):
            found.add("ja")
        if "en" not in found and _LATIN_WORD.search(text):
            found.add("en")
        if len(found) == 2:
            break
    return sorted(found)


@dataclass
class ExportFigures:
    """What an export holds and what hygiene did, for the card and the manifest alike."""

    dataset: str
    version: str
    kind: str
    rows_by_split: dict[str, int]
    records: int
    sessions: int
    models: list[str]
    slots: list[str]
    redactions_by_kind: dict[str, int]
    duplicates_removed: int
    clusters: int
    removed_by_filter: dict[str, int]
    split_joins: int
    license: str
    languages: list[str]
    made_by: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Any] = field(default_factory=dict)
    # Rows per split of each config beside the main one (``preference``).
    configs: dict[str, dict[str, int]] = field(default_factory=dict)
    # The judge's figures (``preferences.PreferenceFigures``), when the version was judged.
    preference: dict[str, Any] | None = None
    # Model answers held back by the quality gates, per cause (``lib/gates``); empty: none ran.
    held_back_by_gate: dict[str, int] = field(default_factory=dict)
    # A dataset recipe's export: the recipe as written and its per-column figures
    # (``lib/recipes/export.py``); None for the other kinds.
    recipe: dict[str, Any] | None = None


def _config(name: str, rows_by_split: Mapping[str, int]) -> dict[str, Any]:
    splits = [s for s, n in rows_by_split.items() if n]
    return {
        "config_name": name,
        "data_files": [{"split": s, "path": f"hf/{name}/{s}.parquet"} for s in splits],
    }


def header(layout: Layout, figures: ExportFigures) -> dict[str, Any]:
    # A config with no rows has no files to list, and load_dataset refuses an empty one.
    extra = [_config(n, rows) for n, rows in figures.configs.items() if any(rows.values())]
    return {
        "configs": [{**_config(layout.config, figures.rows_by_split), "default": True}, *extra],
        "language": figures.languages or ["en"],
        "license": figures.license,
        "task_categories": list(layout.task_categories),
        "size_categories": [size_category(sum(figures.rows_by_split.values()))],
        "tags": list(layout.tags),
        "pretty_name": f"{figures.dataset} {figures.version}",
    }


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"


def _gates_line(figures: ExportFigures) -> str:
    if not figures.held_back_by_gate or figures.recipe is not None:
        # A recipe's rows are held back per column: its own section says so.
        return ""
    return (
        "- Answers held back by the quality gates, per cause (also counted when a filter "
        f"removed them): {_counts(figures.held_back_by_gate)}.\n"
    )


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
    return f"""
## Preference pairs (`preference` config)

Each prompt's answers were compared two at a time by a judge model, each comparison asked
twice with the answers swapped. A pair is kept only when both orders chose the same answer.

- Judge model: {", ".join(p["judge_models"]) or "none"}.
- Comparisons: {p["comparisons"]}; both orders parsed: {p["both_parsed"]}; agreement rate:
  {rate}; ties (the orders disagreed, or scored both answers equal): {p["ties"]};
  comparisons with an unparsed judge answer: {p["with_unparsed"]}; pairs held back by the
  quality gates: {_counts(p.get("held_back_by_gate") or {})}.
- Pairs per split: {_counts(rows)}. Pairs per model pairing: {_counts(p["pairs_by_pairing"])}.
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


def _column_line(name: str, c: Mapping[str, Any]) -> str:
    who = ", ".join(c.get("slots") or []) or "-"
    models = ", ".join(c.get("models") or []) or "-"
    return (
        f"| {name} | {c['type']} | {c.get('role') or '-'} | {who} | {models} | "
        f"{c.get('prompt_tokens', 0)} | {c.get('completion_tokens', 0)} | {c.get('ok', 0)} | "
        f"{c.get('rejected', 0)} | {_counts(c.get('rejected_by_cause') or {})} |"
    )


_COLUMNS_HEAD = (
    "| column | type | role | slots | models | prompt tokens | completion tokens | cells ok "
    "| cells held back | held back by cause |\n|---|---|---|---|---|---|---|---|---|---|"
)


def recipe_section(figures: ExportFigures) -> str:
    """The card's part on a dataset recipe: the recipe itself, then per column its slots,
    models, tokens and the cells its gates and validations held back."""
    r = figures.recipe
    if r is None:
        return ""
    recipe = yaml.safe_dump(r["recipe"], sort_keys=False, allow_unicode=True).rstrip()
    columns = "\n".join(_column_line(n, c) for n, c in r["columns"].items())
    return f"""
## The recipe

Each row is one seed row of the dataset recipe `{r["name"]}` (cells of version
`{r["cells_version"]}`), with a column per recipe column and sub-columns
(`<column>_<property>`) for structured and judge answers; values that are not text or a
number are JSON text. `messages` is the conversation of the column `{r["chat_column"] or "-"}`
(its prompt, then its answer), which the `openai/` view holds. A row with a cell that a gate
or a validation held back, or with a column not generated yet, is only in `samples.parquet`,
with `gate` (the column) and `causes`.

```yaml
{recipe}
```

{_COLUMNS_HEAD}
{columns}

Rows held back, by the column that held them: {_counts(figures.held_back_by_gate)}.
"""


_KINDS = {
    "sessions": "Agent session trajectories",
    "samples": "Prompt fan-out samples",
    "rows": "Dataset recipe rows",
}


def card_text(layout: Layout, figures: ExportFigures) -> str:
    head = yaml.safe_dump(header(layout, figures), sort_keys=False, allow_unicode=True)
    f = figures
    made = f.made_by
    return f"""---
{head}---

# {f.dataset} {f.version}

{_KINDS.get(f.kind, "Records")} exported
by model-foundry.

## What it holds

- Rows per split: {_counts(f.rows_by_split)} ({f.records} records before duplicates and
  filters).
- {"Seed rows" if f.kind == "rows" else "Sessions"}: {f.sessions}. Models:
  {", ".join(f.models) or "none"}. Slots: {", ".join(f.slots) or "none"}.
- Redactions by kind: {_counts(f.redactions_by_kind)}. Secrets are replaced by typed
  markers `[REDACTED:<kind>]`; e-mail addresses by `[REDACTED:email]` and IP addresses by
  `[REDACTED:ipv4]` or `[REDACTED:ipv6]` (removed, not hashed); the user name in a home
  folder path (`home_path`) by `user_<hash>`, an HMAC-SHA256 keyed with a salt kept by the
  exporting installation, so one user is one alias across the dataset.
- Near-duplicate clusters: {f.clusters}; duplicates removed: {f.duplicates_removed}; groups
  joined across splits (sent to train): {f.split_joins}.
- Filters applied, records each removed: {_counts(f.removed_by_filter)}.
{_gates_line(f)}
## Files

- `hf/{layout.config}/<split>.parquet`: the `{layout.config}` config. Every file has the same
  schema. Tool-call `arguments` and `tools` are JSON text, because their keys and value types
  differ from call to call.
- `openai/<split>.jsonl`: OpenAI's fine-tuning chat format (reasoning left out).
- `samples.parquet`: every record, kept or not, with its flags, cluster id, split and
  lineage, for DuckDB.
- `manifest.json`: these figures, machine-readable.
{preference_section(f)}{recipe_section(f)}
## How it was made

model-foundry {made.get("version", "unknown")}, run {made.get("run", "outside Dagster")},
exported {made.get("exported_at", "")}. License: {f.license}.

## Loading and publishing

```python
from datasets import load_dataset
ds = load_dataset("path/to/{f.dataset}/{f.version}", "{layout.config}")
```

```bash
huggingface-cli upload <user>/<repo> . . --repo-type dataset
```

(run from this folder; it uploads the folder as it is).
"""


__all__ = [
    "ExportFigures",
    "card_text",
    "header",
    "languages",
    "preference_section",
    "recipe_section",
    "size_category",
    "win_rate_table",
]
