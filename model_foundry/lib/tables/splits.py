"""``dataset_split_groups``: the split each group of a dataset was given, once and for good.

A group (a session, a prompt, a cluster of near duplicates) gets its split the first time
it is exported; ``lib/hygiene/splits.py`` reads this table so that every later export puts
the group's records on the same side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table


@dataclass(frozen=True)
class SplitGroupRow:
    """Group ``group_id`` of ``dataset`` sits in ``split`` (``train``, ``test``, ...)."""

    dataset: str
    group_id: str
    split: str
    assigned_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


DATASET_SPLIT_GROUPS: Table[SplitGroupRow] = Table(
    "dataset_split_groups",
    SplitGroupRow,
    """
    CREATE TABLE IF NOT EXISTS dataset_split_groups (
        dataset VARCHAR NOT NULL,
        group_id VARCHAR NOT NULL,
        split VARCHAR NOT NULL,
        assigned_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (dataset, group_id)
    )
    """,
)

__all__ = ["DATASET_SPLIT_GROUPS", "SplitGroupRow"]
