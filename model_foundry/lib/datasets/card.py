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

from model_foundry.lib.datasets.layouts import Layout

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


def header(layout: Layout, figures: ExportFigures) -> dict[str, Any]:
    splits = [s for s, n in figures.rows_by_split.items() if n]
    return {
        "configs": [
            {
                "config_name": layout.config,
                "data_files": [
                    {"split": s, "path": f"hf/{layout.config}/{s}.parquet"} for s in splits
                ],
                "default": True,
            }
        ],
        "language": figures.languages or ["en"],
        "license": figures.license,
        "task_categories": list(layout.task_categories),
        "size_categories": [size_category(sum(figures.rows_by_split.values()))],
        "tags": list(layout.tags),
        "pretty_name": f"{figures.dataset} {figures.version}",
    }


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"


def card_text(layout: Layout, figures: ExportFigures) -> str:
    head = yaml.safe_dump(header(layout, figures), sort_keys=False, allow_unicode=True)
    f = figures
    made = f.made_by
    return f"""---
{head}---

# {f.dataset} {f.version}

{"Agent session trajectories" if f.kind == "sessions" else "Prompt fan-out samples"} exported
by model-foundry.

## What it holds

- Rows per split: {_counts(f.rows_by_split)} ({f.records} records before duplicates and
  filters).
- Sessions: {f.sessions}. Models: {", ".join(f.models) or "none"}. Slots:
  {", ".join(f.slots) or "none"}.
- Redactions by kind (secrets as typed markers `[REDACTED:kind]`, e-mails, IPs and home
  folder user names hashed per installation): {_counts(f.redactions_by_kind)}.
- Near-duplicate clusters: {f.clusters}; duplicates removed: {f.duplicates_removed}; groups
  joined across splits (sent to train): {f.split_joins}.
- Filters applied, records each removed: {_counts(f.removed_by_filter)}.

## Files

- `hf/{layout.config}/<split>.parquet`: the `{layout.config}` config. Every file has the same
  schema. Tool-call `arguments` and `tools` are JSON text, because their keys and value types
  differ from call to call.
- `openai/<split>.jsonl`: OpenAI's fine-tuning chat format (reasoning left out).
- `chat.jsonl`: the openai view's records of every split in one file, kept for one release
  under its old name.
- `samples.parquet`: every record, kept or not, with its flags, cluster id, split and
  lineage, for DuckDB.
- `manifest.json`: these figures, machine-readable.

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


__all__ = ["ExportFigures", "card_text", "header", "languages", "size_category"]
