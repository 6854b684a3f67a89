"""The dataset card (``README.md`` with the Hub's YAML header) and its figures.

The header lists each config's ``data_files`` per split (the ``hf/`` Parquet files), the
languages found in the text, the task, the size category, tags and the license: the one
given, else ``unknown`` (never guessed). The body says what is in the export and how it was
made, how to load it and the command that publishes the folder as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from model_foundry.lib.exports.layouts import Layout

_SIZES = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]


def size_category(n: int) -> str:
    for bound, name in _SIZES:
        if n < bound:
            return name
    return "1M<n<10M" if n < 10_000_000 else "10M<n<100M"


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
    # Rows per split of each config beside the main one.
    configs: dict[str, dict[str, int]] = field(default_factory=dict)
    # A caller's own figures, set by it before the card is written and kept in the manifest
    # under these names: a judged version's preference pairs, a dataset recipe's columns.
    preference: dict[str, Any] | None = None
    # Records held back by the quality gates, per cause (``lib/gates``); empty: none ran.
    held_back_by_gate: dict[str, int] = field(default_factory=dict)
    recipe: dict[str, Any] | None = None
    # The check against the lab's eval sets (``lib/decontamination``); None: not checked.
    decontamination: dict[str, Any] | None = None


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


def counts_text(counts: Mapping[str, int]) -> str:
    """``a: 1, b: 2`` (sorted), or ``none``: how the card writes a count per name."""
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"


def held_back_line(figures: ExportFigures) -> str:
    """A line for the card's "What it holds": the answers the quality gates held back, per
    cause; empty when no gate ran."""
    if not figures.held_back_by_gate:
        return ""
    return (
        "- Answers held back by the quality gates, per cause (also counted when a filter "
        f"removed them): {counts_text(figures.held_back_by_gate)}.\n"
    )


def eval_sets_section(figures: ExportFigures) -> str:
    """The card's "Evaluation sets": per eval set, its items, the rows checked and held
    back and the items hit most; or that nothing was checked."""
    found = figures.decontamination
    if found is None:
        return (
            "\n## Evaluation sets\n\nNot checked: no evaluation sets were configured "
            "(`MODEL_FOUNDRY_EVAL_SETS`).\n"
        )
    lines = [
        "| Eval set | Items | Rows checked | Held back | Kept, under threshold | Items hit most |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in found["eval_sets"].items():
        most = ", ".join(f"{h['item_id']} ({h['rows']})" for h in s["items_hit_most"]) or "none"
        lines.append(
            f"| {name} | {s['items']} | {s['rows_checked']} | {s['rows_held_back']} | "
            f"{s['rows_under_threshold']} | {most} |"
        )
    table = "\n".join(lines)
    return f"""
## Evaluation sets

Every text was checked against the eval sets of `{found["file"]}`: normalised
{found["ngram"]}-token n-grams (a token is a word, or a character in scripts without
spaces; an item shorter than that is matched whole). A row holding at least
{found["threshold"]:g} of an item's n-grams (or of one of its text fields') is held back as
`contaminated`; its best match (eval set, item, score, span) is in `samples.parquet`'s
`contamination` column, also for rows kept under the threshold.

{table}
"""


# A part of the card a caller adds, from the export's figures; empty to add nothing.
Section = Callable[[ExportFigures], str]


@dataclass(frozen=True)
class CardSections:
    """What a caller adds to the card: lines under "What it holds" and sections after
    "Files" (each written in order, empty ones leaving no trace)."""

    holds: Sequence[Section] = ()
    sections: Sequence[Section] = ()


# A card with nothing of a caller's.
NO_SECTIONS = CardSections()


def card_text(layout: Layout, figures: ExportFigures, parts: CardSections = NO_SECTIONS) -> str:
    """The card of an export of ``layout``'s records, with the caller's ``parts``."""
    head = yaml.safe_dump(header(layout, figures), sort_keys=False, allow_unicode=True)
    f = figures
    made = f.made_by
    return f"""---
{head}---

# {f.dataset} {f.version}

{layout.title} exported
by model-foundry.

## What it holds

- Rows per split: {counts_text(f.rows_by_split)} ({f.records} records before duplicates and
  filters).
- {layout.group.capitalize()}s: {f.sessions}. Models:
  {", ".join(f.models) or "none"}. Slots: {", ".join(f.slots) or "none"}.
- Redactions by kind: {counts_text(f.redactions_by_kind)}. Secrets are replaced by typed
  markers `[REDACTED:<kind>]`; e-mail addresses by `[REDACTED:email]` and IP addresses by
  `[REDACTED:ipv4]` or `[REDACTED:ipv6]` (removed, not hashed); the user name in a home
  folder path (`home_path`) by `user_<hash>`, an HMAC-SHA256 keyed with a salt kept by the
  exporting installation, so one user is one alias across the dataset.
- Near-duplicate clusters: {f.clusters}; duplicates removed: {f.duplicates_removed}; groups
  joined across splits (sent to train): {f.split_joins}.
- Filters applied, records each removed: {counts_text(f.removed_by_filter)}.
{"".join(hold(f) for hold in parts.holds)}
## Files

- `hf/{layout.config}/<split>.parquet`: the `{layout.config}` config. Every file has the same
  schema. Tool-call `arguments` and `tools` are JSON text, because their keys and value types
  differ from call to call.
- `openai/<split>.jsonl`: OpenAI's fine-tuning chat format (reasoning left out).
- `samples.parquet`: every record, kept or not, with its flags, cluster id, split and
  lineage, for DuckDB.
- `manifest.json`: these figures, machine-readable.
{"".join(section(f) for section in parts.sections)}{eval_sets_section(f)}
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
    "NO_SECTIONS",
    "CardSections",
    "ExportFigures",
    "Section",
    "card_text",
    "counts_text",
    "eval_sets_section",
    "header",
    "held_back_line",
    "size_category",
]
