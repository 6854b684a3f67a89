"""A batch's inbox rows and dead letters as Arrow tables, the form DuckDB inserts them from.

The table shapes are in ``lib/tables/inbox.py``; the columns named here must match their
insert columns (a test holds them together).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter

import pyarrow as pa

from model_foundry.lib.events import DeadLetter, InboxEvent
from model_foundry.lib.tables.inbox import PIPELINE_EVENT_DEAD_LETTER, PIPELINE_EVENT_INBOX


def warm() -> None:
    """Build one array, so pyarrow's first-array import of pandas happens now.

    That import takes a noticeable fraction of a second. The drain calls this before its
    first batch, so it is not paid inside a transaction that holds the DuckDB file; it is
    not done at import, where every run and code server that loads the definitions (most
    never write an event) would pay it.
    """
    pa.array([0], pa.int64())


# Where each inbox column comes from, column by column: the drain's hot path builds each
# Arrow column with one C-level map over the batch, never a row object per event.
INBOX_SOURCES: dict[str, Callable[[InboxEvent], object]] = {
    "event_id": attrgetter("event_id"),
    "subject": attrgetter("subject"),
    "source_subject": attrgetter("source_subject"),
    "correlation_id": attrgetter("correlation_id"),
    "occurred_at": attrgetter("occurred_at"),
    "received_at": attrgetter("received_at"),
    "stream_seq": attrgetter("stream_seq"),
    "payload": attrgetter("payload_json"),
    "body_sha256": attrgetter("body_sha256"),
    "published_at": attrgetter("published_at"),
    # Known only inside the transaction: the append replaces it with the commit's number.
    "commit_seq": lambda _e: 0,
}
# The dead-letter columns but ``stream``, which is the batch's.
DEAD_SOURCES: dict[str, Callable[[DeadLetter], object]] = {
    "stream_seq": attrgetter("stream_seq"),
    "subject": attrgetter("subject"),
    "source_subject": attrgetter("source_subject"),
    "event_id": attrgetter("event_id"),
    "reason": attrgetter("reason"),
    "raw": attrgetter("raw"),
    "raw_bytes": lambda d: len(d.raw),
    "received_at": attrgetter("received_at"),
    "published_at": attrgetter("published_at"),
}
# ``payload`` is staged as Arrow's JSON extension type: the drain made the text with
# orjson.dumps, so it is valid JSON, and DuckDB takes an ``arrow.json`` column into its JSON
# column as it is, where a plain string column is parsed again to be cast.
_INBOX_ARROW_SCHEMA = PIPELINE_EVENT_INBOX.arrow_schema
_INBOX_ARROW_SCHEMA = _INBOX_ARROW_SCHEMA.set(
    _INBOX_ARROW_SCHEMA.get_field_index("payload"), pa.field("payload", pa.json_())
)
_DEAD_ARROW_SCHEMA = PIPELINE_EVENT_DEAD_LETTER.arrow_schema


_RECEIVED_AT_TYPE = _INBOX_ARROW_SCHEMA.field("received_at").type


def _column(name: str, events: Sequence[InboxEvent]) -> list[object] | pa.Array:
    values = list(map(INBOX_SOURCES[name], events))
    if name == "received_at" and values and all(v is values[0] for v in values):
        # The drain gives a whole batch one received_at: one scalar repeated, instead of
        # a time zone lookup per event.
        return pa.repeat(pa.scalar(values[0], _RECEIVED_AT_TYPE), len(values))
    return values


def inbox_table(events: Sequence[InboxEvent]) -> pa.Table:
    return pa.Table.from_pydict(
        {name: _column(name, events) for name in INBOX_SOURCES}, schema=_INBOX_ARROW_SCHEMA
    )


def dead_table(stream: str, dead: Sequence[DeadLetter]) -> pa.Table:
    columns = {name: list(map(get, dead)) for name, get in DEAD_SOURCES.items()}
    return pa.Table.from_pydict(
        {"stream": [stream] * len(dead), **columns}, schema=_DEAD_ARROW_SCHEMA
    )


__all__ = ["DEAD_SOURCES", "INBOX_SOURCES", "dead_table", "inbox_table", "warm"]
