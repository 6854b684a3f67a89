"""What a recipe's run did, as its asset's metadata: rows, cells new and reused, requests,
and the cells held back by cause."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RecipeOutcome:
    """What a run did: rows, cells new and reused, requests, rejections by cause."""

    recipe: str
    version: str
    rows: int = 0
    cells_written: int = 0
    cells_reused: int = 0
    llm_cells_asked: int = 0
    llm_cells_unanswered: int = 0
    rejected_by_cause: Counter[str] = field(default_factory=Counter)
    # column -> status -> cells this run holds (new or reused)
    cells_by_column: dict[str, Counter[str]] = field(default_factory=dict)
    view: str | None = None
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    blocked: dict[str, set[str]] = field(default_factory=dict)
    # Rows with a request that got no answer: the next run asks it (and an incremental seed
    # reads them again, ``seeds.advance_mark``).
    pending: set[str] = field(default_factory=set)
    # An incremental seed's new mark (None: it stayed where it was).
    seed_mark: int | None = None
    llm: dict[str, Any] = field(default_factory=dict)

    def complete_rows(self) -> int:
        return sum(1 for rid in self.values if not self.blocked.get(rid))

    def unanswered_warning(self) -> str | None:
        """The warning for cells the run got no answer for, or None."""
        if not self.llm_cells_unanswered:
            return None
        return (
            f"recipe {self.recipe}: {self.llm_cells_unanswered} cells got no answer "
            "(failure_causes says why); the next run asks only those"
        )

    def metadata(self) -> dict[str, Any]:
        return {
            "recipe": self.recipe,
            "version": self.version,
            "rows": self.rows,
            "rows_complete": self.complete_rows(),
            "cells_written": self.cells_written,
            "cells_reused": self.cells_reused,
            "llm_cells_asked": self.llm_cells_asked,
            "llm_cells_unanswered": self.llm_cells_unanswered,
            "rejected_by_cause": dict(sorted(self.rejected_by_cause.items())),
            "cells_by_column": {c: dict(n) for c, n in self.cells_by_column.items()},
            "view": self.view,
            **({"seed_mark": self.seed_mark} if self.seed_mark is not None else {}),
            **self.llm,
        }


__all__ = ["RecipeOutcome"]
