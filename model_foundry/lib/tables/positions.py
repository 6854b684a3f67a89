"""Commit positions: how far into the inbox each downstream step has read.

``pipeline_event_inbox_commits`` is one row, the number of the inbox writer's last commit.
The writer takes the next number in the same transaction as its batch (``lib/inbox/store.py``)
and stamps it on every row of the batch as ``commit_seq``. A second writer that tries to take
a number while the first one's transaction is open gets DuckDB's write-write conflict and
retries, so numbers follow commit order and any reader's snapshot sees every commit up to
the counter it sees: a gap-free prefix.

``pipeline_event_inbox_counts`` holds the events per subject up to the ``inbox_counts``
step's position, so the exporter counts only the commits after it.

``downstream_positions`` is one row per downstream step: the last ``commit_seq`` whose rows
it has taken in. A step writes its rows and its new position in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table


@dataclass(frozen=True)
class InboxCommitsRow:
    last_commit_seq: int


@dataclass(frozen=True)
class InboxCountsRow:
    """Events per subject up to the ``inbox_counts`` step's position, and the newest time."""

    subject: str
    events: int
    newest_at: datetime | None


@dataclass(frozen=True)
class DownstreamPositionRow:
    """``position`` is the last inbox ``commit_seq`` the step has read; -1: none yet."""

    step: str
    position: int
    updated_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


PIPELINE_EVENT_INBOX_COMMITS: Table[InboxCommitsRow] = Table(
    "pipeline_event_inbox_commits",
    InboxCommitsRow,
    """
    CREATE TABLE IF NOT EXISTS pipeline_event_inbox_commits (
        last_commit_seq BIGINT NOT NULL
    )
    """,
)

# The counter's one row, made with the table (the registry runs it after every CREATE): rows
# written before commit positions existed carry 0, so the writer's numbers start at 1.
SEED_INBOX_COMMITS = (
    "INSERT INTO pipeline_event_inbox_commits SELECT 0 "
    "WHERE NOT EXISTS (SELECT 1 FROM pipeline_event_inbox_commits)"
)

# One row per subject: what the exporter reads instead of counting the whole inbox.
PIPELINE_EVENT_INBOX_COUNTS: Table[InboxCountsRow] = Table(
    "pipeline_event_inbox_counts",
    InboxCountsRow,
    """
    CREATE TABLE IF NOT EXISTS pipeline_event_inbox_counts (
        subject VARCHAR NOT NULL,
        events BIGINT NOT NULL,
        newest_at TIMESTAMPTZ
    )
    """,
)

# One row per step (a handful): the key's index stays this small.
DOWNSTREAM_POSITIONS: Table[DownstreamPositionRow] = Table(
    "downstream_positions",
    DownstreamPositionRow,
    """
    CREATE TABLE IF NOT EXISTS downstream_positions (
        step VARCHAR PRIMARY KEY,
        position BIGINT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

__all__ = [
    "DOWNSTREAM_POSITIONS",
    "PIPELINE_EVENT_INBOX_COMMITS",
    "PIPELINE_EVENT_INBOX_COUNTS",
    "SEED_INBOX_COMMITS",
    "DownstreamPositionRow",
    "InboxCommitsRow",
    "InboxCountsRow",
]
