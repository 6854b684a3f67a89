"""The card's part on a dataset recipe's export: the recipe as written, then per column its
slots, models, tokens and the cells held back, by cause.

The recipe export hands it to the card (``lib/exports/card.py`` knows none of its callers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from model_foundry.lib.exports.card import ExportFigures, counts_text


def _column_line(name: str, c: Mapping[str, Any]) -> str:
    who = ", ".join(c.get("slots") or []) or "-"
    models = ", ".join(c.get("models") or []) or "-"
    return (
        f"| {name} | {c['type']} | {c.get('role') or '-'} | {who} | {models} | "
        f"{c.get('prompt_tokens', 0)} | {c.get('completion_tokens', 0)} | {c.get('ok', 0)} | "
        f"{c.get('rejected', 0)} | {counts_text(c.get('rejected_by_cause') or {})} |"
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

Rows held back, by the column that held them: {counts_text(figures.held_back_by_gate)}.
"""


__all__ = ["recipe_section"]
