"""Draining one subject's consumers into the DuckDB inbox.

The one code path behind the ``pipeline_event_inbox_record`` asset, ``make demo`` and
``model-foundry bench ingest``. A subject's partition has one consumer, or two on a NATS
server without ``filter_subjects`` (its own name and its legacy name; see
``lib/nats/consumers.py``); the drain empties each in turn. Per batch: fetch, validate,
write inbox rows and dead letters in one DuckDB transaction, and only then acknowledge
(``+ACK`` for stored and duplicate events, ``+TERM`` for dead letters). A process killed at
any point therefore leaves each message either unacknowledged (JetStream redelivers it) or
committed (the store turns the redelivery into a counted duplicate).

JetStream never stops redelivering. A batch whose commit fails is left unacknowledged and
the error is raised; once a message of a failing batch has been delivered ``max_deliver``
times, the batch is written around it and it is stored alone or, failing that, kept as a
dead letter with the error as the reason. If even that write fails (a full disk) it stays
in the queue. So no message leaves the queue without being in the inbox or the dead-letter
table, whichever way its delivery ends.

The package's modules: ``record.py`` (each fetched message as the contract saw it, and the
run's :class:`InboxRecord`), ``commit.py`` (a batch's commit and its failure policy),
``writer.py`` (the thread that runs the commits in order), ``tuning.py`` (interpreter
settings while a drain runs), ``telemetry.py`` (its events) and ``loop.py`` (the fetch loop
and :func:`drain_subject`).
"""

from model_foundry.lib.inbox.drain.commit import Committed
from model_foundry.lib.inbox.drain.loop import COMMIT_DEPTH, DEFAULT_BATCH_SIZE, drain_subject
from model_foundry.lib.inbox.drain.record import MAX_RECORDED_IDS, Checked, InboxRecord

__all__ = [
    "COMMIT_DEPTH",
    "DEFAULT_BATCH_SIZE",
    "MAX_RECORDED_IDS",
    "Checked",
    "Committed",
    "InboxRecord",
    "drain_subject",
]
