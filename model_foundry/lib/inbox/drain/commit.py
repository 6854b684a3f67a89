"""A batch's commit and its failure policy.

A batch is committed in one transaction and then answered: ``+ACK`` for its events (stored
or duplicates), ``+TERM`` for its dead letters. A commit that fails leaves the batch
unacknowledged and raises, unless a message of it has been delivered ``max_deliver`` times:
then the batch is written around it (:func:`_write_around`), and it is stored alone or,
failing that, kept as a dead letter with the error as the reason.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from nats.aio.msg import Msg

from model_foundry.lib.events import DeadLetter, InboxEvent
from model_foundry.lib.hygiene.shown import shown_text
from model_foundry.lib.inbox.drain.record import Checked
from model_foundry.lib.inbox.store import (
    BatchResult,
    StagedBatch,
    stage_batch,
    write_batch,
    write_staged,
)
from model_foundry.lib.storage import BatchWriter, DuckDBBusyError

log = logging.getLogger(__name__)

# How much of a storage error the reason of a dead letter keeps.
MAX_ERROR_CHARS = 300

# The drain's writer defers DuckDB's merging of small row groups (``BatchWriter``'s
# ``defer_merges``) to the release after each commit whose number is a multiple of this: a
# release every ``max_hold_s`` then stops rewriting the inbox's last row groups each time,
# and the inbox holds at most about this many small row groups between two merges, however
# many processes drained it meanwhile (the commit number is stored in the file).
MERGE_EVERY_COMMITS = 256


@dataclass
class Committed:
    """What a batch's commit stored, and how each message is to be answered."""

    result: BatchResult = field(default_factory=BatchResult)
    dead: list[DeadLetter] = field(default_factory=list)
    ack: list[Msg] = field(default_factory=list)
    term: list[Msg] = field(default_factory=list)
    # Neither stored nor dead-lettered: left unacknowledged, redelivered after ack_wait.
    unstored: list[Msg] = field(default_factory=list)
    error: BaseException | None = None


@dataclass
class ReadyBatch:
    """A validated batch staged for its transaction, and how each message is answered once
    it is committed: ``+ACK`` for events, ``+TERM`` for dead letters."""

    checked: Sequence[Checked]
    batch: StagedBatch
    ack: list[Msg]
    term: list[Msg]


def ready_batch(checked: Sequence[Checked]) -> ReadyBatch:
    events: list[InboxEvent] = []
    dead: list[DeadLetter] = []
    ack: list[Msg] = []
    term: list[Msg] = []
    for c in checked:
        if isinstance(c.item, InboxEvent):
            events.append(c.item)
            ack.append(c.msg)
        else:
            dead.append(c.item)
            term.append(c.msg)
    return ReadyBatch(checked, stage_batch(events, dead), ack, term)


def _write(writer: BatchWriter, stream: str, ready: ReadyBatch) -> Committed:
    """One transaction for a ready batch: events to the inbox, contract breaks to dead
    letters."""
    result = writer.write(partial(write_staged, stream=stream, batch=ready.batch))
    return Committed(result=result, dead=list(ready.batch.dead), ack=ready.ack, term=ready.term)


def _merge(into: Committed, part: Committed) -> None:
    into.result.add(part.result)
    into.dead += part.dead
    into.ack += part.ack
    into.term += part.term
    into.unstored += part.unstored


def _undeliverable(c: Checked, error: BaseException) -> DeadLetter:
    text = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error) else ''}"
    reason = f"not stored after {c.deliveries} deliveries: {text}"[:MAX_ERROR_CHARS]
    if isinstance(c.item, DeadLetter):
        return dataclasses.replace(c.item, reason=f"{c.item.reason}; {reason}"[:MAX_ERROR_CHARS])
    e = c.item
    return DeadLetter(
        subject=e.subject,
        source_subject=e.source_subject,
        stream_seq=e.stream_seq,
        received_at=e.received_at,
        reason=reason,
        raw=e.raw,
        event_id=e.event_id,
        published_at=e.published_at,
    )


def _write_around(
    writer: BatchWriter, stream: str, checked: Sequence[Checked], budget: int, error: Exception
) -> Committed:
    """A batch that failed with ``error``: each message delivered ``budget`` times is stored
    alone, or else dead-lettered with its own error; then the rest is tried once more."""
    done = Committed()
    for c in (c for c in checked if c.deliveries >= budget):
        try:
            _merge(done, _write(writer, stream, ready_batch([c])))
            continue
        except DuckDBBusyError:
            raise
        except Exception as own:  # any failure of its own write
            letter = _undeliverable(c, own)
        try:
            result = writer.write(partial(write_batch, stream=stream, events=[], dead=[letter]))
        except DuckDBBusyError:
            raise
        except Exception:  # even its dead letter cannot be written
            done.unstored.append(c.msg)
            continue
        _merge(done, Committed(result=result, dead=[letter], term=[c.msg]))
    rest = [c for c in checked if c.deliveries < budget]
    if rest:
        try:
            _merge(done, _write(writer, stream, ready_batch(rest)))
        except DuckDBBusyError:
            raise
        except Exception:  # the rest keeps failing: raise the first error
            done.unstored += [c.msg for c in rest]
            done.error = error
    if done.unstored and done.error is None:
        done.error = error
    return done


def _then_release_if_held_too_long(writer: BatchWriter, work: Callable[[], Committed]) -> Committed:
    """``work``, then let the file go if this writer has held it for too long. Closing
    checkpoints DuckDB's write-ahead log, which takes a while after a long hold, so it runs
    here, in the writer's thread, while the event loop validates the next batch."""
    committed = work()
    if any(seq % MERGE_EVERY_COMMITS == 0 for seq in committed.result.commit_seqs):
        writer.merge_at_release()
    writer.release_if_held_too_long()
    return committed


def commit_batch(writer: BatchWriter, stream: str, ready: ReadyBatch, budget: int) -> Committed:
    """One batch's commit, in the writer's thread; a batch that fails after its messages'
    delivery budget is written around (:func:`_write_around`)."""
    checked = ready.checked
    try:
        return _then_release_if_held_too_long(writer, partial(_write, writer, stream, ready))
    except DuckDBBusyError:
        # The file is busy, not the messages: they all stay for the next run.
        raise
    except Exception as error:
        if not any(c.deliveries >= budget for c in checked):
            raise
        # A storage error may quote a value of the batch; the log ends up in compute logs.
        log.warning("batch failed (%s); writing its messages one by one", shown_text(str(error)))
        return _then_release_if_held_too_long(
            writer, partial(_write_around, writer, stream, checked, budget, error)
        )


__all__ = [
    "MAX_ERROR_CHARS",
    "MERGE_EVERY_COMMITS",
    "Committed",
    "ReadyBatch",
    "commit_batch",
    "ready_batch",
]
