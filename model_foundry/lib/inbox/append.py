"""Appending a batch's new events: each time cluster's events that no stored row within the
duplicate-check window already has, under the transaction's commit number."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from model_foundry.lib.events import InboxEvent
from model_foundry.lib.inbox.arrow_rows import inbox_table
from model_foundry.lib.inbox.commit_spans import next_commit_seq
from model_foundry.lib.inbox.dedupe_window import Cluster, clusters, micros, near_us
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_INBOX

INBOX = PIPELINE_EVENT_INBOX.name

# The stored rows under a cluster's ids in its range. A constant range lets DuckDB skip every
# row group whose min-max index lies outside it; times come back as microseconds (DuckDB
# hands a time near year 9999 back as text when the session's time zone moves it past the
# calendar). Finding the copies first and then appending the rest with a plain INSERT costs
# less than one INSERT ... WHERE NOT EXISTS, which DuckDB runs as a correlated (delim) join.
_FIND_STORED = f"""
SELECT i.event_id, epoch_us(i.occurred_at) FROM {INBOX} i
WHERE i.occurred_at BETWEEN ? AND ?
  AND i.event_id IN (SELECT event_id FROM _staged_inbox)
"""
_APPEND_STAGED = (
    f"INSERT INTO {INBOX} BY NAME SELECT * REPLACE (?::BIGINT AS commit_seq) FROM _staged_inbox"
)


def unregister_quietly(con: duckdb.DuckDBPyConnection, name: str) -> None:
    # After a failed statement the transaction is aborted and every later call, unregister
    # included, raises "Current transaction is aborted": that must not replace the error
    # that aborted it. Closing the connection drops the registration anyway.
    with suppress(duckdb.Error):
        con.unregister(name)


def _has_near_copy(e: InboxEvent, stored: dict[str, list[int]]) -> bool:
    """Whether a stored copy of ``e``'s id (times in microseconds) lies within the window."""
    times = stored.get(e.event_id)
    if not times:
        return False
    at = micros(e.occurred_at)
    return any(near_us(us, at) for us in times)


@dataclass
class CommitSeq:
    """The transaction's commit number, taken from the counter on the first insert only: a
    batch of nothing but duplicates or dead letters takes none."""

    value: int | None = None

    def take(self, con: duckdb.DuckDBPyConnection) -> int:
        if self.value is None:
            self.value = next_commit_seq(con)
        return self.value


@dataclass(frozen=True)
class StagedCluster:
    cluster: Cluster
    table: pa.Table


def stage_clusters(events: Sequence[InboxEvent]) -> list[StagedCluster]:
    return [StagedCluster(c, inbox_table(c.events)) for c in clusters(events)]


def append_new(
    con: duckdb.DuckDBPyConnection, staged: Sequence[StagedCluster], seq: CommitSeq
) -> set[int]:
    """Append each cluster's events that no stored row within the window already has, under
    the transaction's commit number; returns the stream_seqs of those it left out."""
    skipped: set[int] = set()
    for s in staged:
        events = s.cluster.events
        con.register("_staged_inbox", s.table)
        try:
            new = events
            stored = con.execute(_FIND_STORED, [s.cluster.low, s.cluster.high]).fetchall()
            if stored:
                near: dict[str, list[int]] = {}
                for event_id, occurred_us in stored:
                    near.setdefault(event_id, []).append(occurred_us)
                keep = [not _has_near_copy(e, near) for e in events]
                new = [e for e, k in zip(events, keep, strict=True) if k]
                skipped.update(e.stream_seq for e, k in zip(events, keep, strict=True) if not k)
                if len(new) < len(events):
                    con.unregister("_staged_inbox")
                    con.register("_staged_inbox", s.table.filter(pa.array(keep)))
            if new:
                con.execute(_APPEND_STAGED, [seq.take(con)])
        finally:
            unregister_quietly(con, "_staged_inbox")
    return skipped


def insert_new(
    con: duckdb.DuckDBPyConnection, events: Sequence[InboxEvent], seq: CommitSeq
) -> set[int]:
    """Insert the events no stored row within the window already has; their stream_seqs."""
    skipped = append_new(con, stage_clusters(events), seq)
    return {e.stream_seq for e in events if e.stream_seq not in skipped}


__all__ = [
    "INBOX",
    "CommitSeq",
    "StagedCluster",
    "append_new",
    "insert_new",
    "stage_clusters",
    "unregister_quietly",
]
