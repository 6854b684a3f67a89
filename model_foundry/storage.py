"""DuckDB: connecting with lock retries, the inbox schema, and batch writes.

DuckDB lets one process at a time hold a file open for writing. Every writer here therefore
opens the file, writes one batch in one transaction, commits and closes, never holding the
file across a network wait; a process that finds the file locked retries with jittered
backoff, and only after ``lock_timeout_s`` gives up with one readable sentence.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pyarrow as pa

from model_foundry.events import DeadLetter, InboxEvent

DEFAULT_LOCK_TIMEOUT_S = 120.0

T = TypeVar("T")

_MEMORY_LIMIT = re.compile(r"\d+(\.\d+)?\s*[KMGT]i?B", re.IGNORECASE)


class DuckDBBusyError(RuntimeError):
    """The DuckDB file stayed locked by another process for longer than we were willing to wait."""


_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (.+?) \(PID (\d+)\)")


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc)
    return "Could not set lock on file" in text or "Conflicting lock" in text


def _is_write_conflict(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.TransactionException) and "onflict" in str(exc)


def _busy_message(path: Path, waited: float, exc: BaseException) -> str:
    holder = _LOCK_HOLDER.search(str(exc))
    who = f" by PID {holder.group(2)} ({holder.group(1)})" if holder else ""
    return (
        f"DuckDB file {path} stayed locked{who} for {waited:.0f}s; a long query or another "
        "writer holds it, so close it or raise MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT."
    )


def backoff_delays(first: float = 0.02, cap: float = 2.0) -> Iterator[float]:
    """Exponential backoff with full jitter: writers that collided do not collide again."""
    delay = first
    while True:
        yield random.uniform(0, delay)
        delay = min(cap, delay * 2)


_schema_ready: set[tuple[str, str]] = set()
_schema_lock = threading.Lock()


@contextmanager
def connect(
    path: str | Path,
    *,
    read_only: bool = False,
    lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
    schema: Sequence[str] | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open ``path`` (retrying while another process holds the lock), yield, always close.

    ``schema`` statements run once per process and file, so callers can pass their DDL
    every time without paying for it.
    """
    path = Path(path)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    delays = backoff_delays()
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.Error as exc:
            if not _is_lock_error(exc):
                raise
            waited = time.monotonic() - started
            if waited >= lock_timeout_s:
                raise DuckDBBusyError(_busy_message(path, waited, exc)) from None
            time.sleep(next(delays))
    try:
        if schema and not read_only:
            _ensure_schema(con, path, schema)
        yield con
    finally:
        con.close()


def _ensure_schema(con: duckdb.DuckDBPyConnection, path: Path, schema: Sequence[str]) -> None:
    key = (str(path.resolve()), hashlib.sha1("\n".join(schema).encode()).hexdigest())
    with _schema_lock:
        if key in _schema_ready:
            return
        for statement in schema:
            con.execute(statement)
        _schema_ready.add(key)


class BatchWriter:
    """Runs transactions against one DuckDB file, opening it only while there is work.

    ``write(work)`` opens the file if needed (waiting out other processes' locks), runs
    ``work(con)`` between BEGIN and COMMIT, and retries the whole unit on a write conflict.
    The connection stays open for the next batch only if the caller already has that batch
    in hand; ``release()`` closes it, and callers call it before any wait of unknown length.
    ``max_hold_s`` caps how long one writer keeps the file, so other runs and a person's
    query get their turn even during a long drain.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        schema: Sequence[str] | None = None,
        lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
        max_hold_s: float = 2.0,
        memory_limit: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.schema = schema
        self.lock_timeout_s = lock_timeout_s
        self.max_hold_s = max_hold_s
        if memory_limit is not None and not _MEMORY_LIMIT.fullmatch(memory_limit):
            raise ValueError(f"memory limit {memory_limit!r} is not like '64MB' or '1GiB'")
        self.memory_limit = memory_limit
        self._cm: Any = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._opened_at = 0.0

    def _open(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._cm = connect(self.path, schema=self.schema, lock_timeout_s=self.lock_timeout_s)
            self._con = self._cm.__enter__()
            self._opened_at = time.monotonic()
            if self.memory_limit:
                # Validated above; SET takes no parameters. Left unlimited, DuckDB's cache
                # grows with the table, so a long drain's memory would grow with history.
                self._con.execute(f"SET memory_limit = '{self.memory_limit}'")
        return self._con

    def release(self) -> None:
        if self._cm is not None:
            cm, self._cm, self._con = self._cm, None, None
            cm.__exit__(None, None, None)

    def release_if_held_too_long(self) -> None:
        if self._con is not None and time.monotonic() - self._opened_at >= self.max_hold_s:
            self.release()

    def write(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``work`` in one transaction; ``work`` is re-run after a rolled-back conflict."""
        started = time.monotonic()
        delays = backoff_delays()
        while True:
            con = self._open()
            try:
                con.execute("BEGIN TRANSACTION")
                result = work(con)
                con.execute("COMMIT")
                return result
            except duckdb.Error as exc:
                _rollback_quietly(con)
                if not _is_write_conflict(exc):
                    self.release()
                    raise
                waited = time.monotonic() - started
                if waited >= self.lock_timeout_s:
                    self.release()
                    raise DuckDBBusyError(_busy_message(self.path, waited, exc)) from None
            self.release()
            time.sleep(next(delays))

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def run_in_transaction(
    path: str | Path,
    work: Callable[[duckdb.DuckDBPyConnection], T],
    *,
    schema: Sequence[str] | None = None,
    lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
) -> T:
    """Open, run ``work(con)`` inside BEGIN/COMMIT, close; retry the whole unit on conflicts."""
    with BatchWriter(path, schema=schema, lock_timeout_s=lock_timeout_s) as writer:
        return writer.write(work)


def _rollback_quietly(con: duckdb.DuckDBPyConnection) -> None:
    # A failed statement may already have aborted the transaction; either way we are done.
    with suppress(duckdb.Error):
        con.execute("ROLLBACK")


def insert_new_rows(
    path: str | Path,
    insert_sql: str,
    rows: Sequence[Sequence[Any]],
    *,
    schema: Sequence[str] | None = None,
) -> int:
    """Run ``insert_sql`` (an ``INSERT ... ON CONFLICT DO NOTHING`` with ``?`` parameters)
    for every row in one transaction; returns how many rows were new."""
    if not rows:
        return 0

    def work(con: duckdb.DuckDBPyConnection) -> int:
        # DuckDB reports each INSERT's count, 0 for a row the conflict clause skipped.
        return sum(con.execute(insert_sql, list(row)).fetchone()[0] for row in rows)

    return run_in_transaction(path, work, schema=schema)


INBOX_SCHEMA: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS pipeline_event_inbox (
        event_id VARCHAR PRIMARY KEY,
        subject VARCHAR NOT NULL,
        source_subject VARCHAR NOT NULL,
        correlation_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        received_at TIMESTAMPTZ NOT NULL,
        stream_seq BIGINT NOT NULL,
        payload JSON NOT NULL,
        body_sha256 VARCHAR NOT NULL,
        inserted_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS pipeline_event_dead_letter (
        stream VARCHAR NOT NULL,
        stream_seq BIGINT NOT NULL,
        subject VARCHAR NOT NULL,
        source_subject VARCHAR NOT NULL,
        event_id VARCHAR,
        reason VARCHAR NOT NULL,
        raw BLOB NOT NULL,
        raw_bytes BIGINT NOT NULL,
        received_at TIMESTAMPTZ NOT NULL,
        dead_lettered_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (stream, stream_seq)
    )
    """,
)


@dataclass
class BatchResult:
    """What one committed batch did."""

    inserted_ids: list[str] = field(default_factory=list)
    duplicates: int = 0
    conflicts: int = 0
    dead_lettered: int = 0


_INBOX_ARROW_SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("subject", pa.string()),
        ("source_subject", pa.string()),
        ("correlation_id", pa.string()),
        ("occurred_at", pa.timestamp("us", tz="UTC")),
        ("received_at", pa.timestamp("us", tz="UTC")),
        ("stream_seq", pa.int64()),
        ("payload", pa.string()),
        ("body_sha256", pa.string()),
    ]
)

_DEAD_ARROW_SCHEMA = pa.schema(
    [
        ("stream", pa.string()),
        ("stream_seq", pa.int64()),
        ("subject", pa.string()),
        ("source_subject", pa.string()),
        ("event_id", pa.string()),
        ("reason", pa.string()),
        ("raw", pa.binary()),
        ("raw_bytes", pa.int64()),
        ("received_at", pa.timestamp("us", tz="UTC")),
    ]
)


def _inbox_table(events: Sequence[InboxEvent]) -> pa.Table:
    return pa.Table.from_pydict(
        {
            "event_id": [e.event_id for e in events],
            "subject": [e.subject for e in events],
            "source_subject": [e.source_subject for e in events],
            "correlation_id": [e.correlation_id for e in events],
            "occurred_at": [e.occurred_at for e in events],
            "received_at": [e.received_at for e in events],
            "stream_seq": [e.stream_seq for e in events],
            "payload": [e.payload_json for e in events],
            "body_sha256": [e.body_sha256 for e in events],
        },
        schema=_INBOX_ARROW_SCHEMA,
    )


def _dead_table(stream: str, dead: Sequence[DeadLetter]) -> pa.Table:
    return pa.Table.from_pydict(
        {
            "stream": [stream] * len(dead),
            "stream_seq": [d.stream_seq for d in dead],
            "subject": [d.subject for d in dead],
            "source_subject": [d.source_subject for d in dead],
            "event_id": [d.event_id for d in dead],
            "reason": [d.reason for d in dead],
            "raw": [d.raw for d in dead],
            "raw_bytes": [len(d.raw) for d in dead],
            "received_at": [d.received_at for d in dead],
        },
        schema=_DEAD_ARROW_SCHEMA,
    )


def write_batch(
    con: duckdb.DuckDBPyConnection,
    stream: str,
    events: Sequence[InboxEvent],
    dead: Sequence[DeadLetter],
) -> BatchResult:
    """Insert one fetched batch; the caller owns the transaction.

    Idempotent on ``event_id`` (inbox) and on ``(stream, stream_seq)`` (dead letters), so a
    batch redelivered after a crash between commit and ack adds nothing. An ``event_id``
    already stored with a different body keeps the first body and is recorded as a dead
    letter, so the conflict is visible instead of silently dropped.
    """
    result = BatchResult()
    dead = list(dead)
    if events:
        # Insert the earliest copy of each id in the batch; later copies are duplicates (or
        # conflicts), found below. Deduplicating here spares DuckDB a window over the batch.
        first: dict[str, InboxEvent] = {}
        for e in sorted(events, key=lambda e: e.stream_seq):
            first.setdefault(e.event_id, e)
        staged = _inbox_table(list(first.values()))
        con.register("_staged_inbox", staged)
        try:
            rows = con.execute(
                """
                INSERT INTO pipeline_event_inbox BY NAME
                SELECT * FROM _staged_inbox
                ON CONFLICT (event_id) DO NOTHING
                RETURNING event_id, stream_seq
                """
            ).fetchall()
        finally:
            con.unregister("_staged_inbox")
        result.inserted_ids = [r[0] for r in rows]
        inserted_seqs = {r[1] for r in rows}
        # Only the rows that were not inserted can conflict; in steady state there are none,
        # so the common path never looks up the (large) inbox table.
        others = [e for e in events if e.stream_seq not in inserted_seqs]
        if others:
            placeholders = ",".join("?" * len({e.event_id for e in others}))
            ids = list(dict.fromkeys(e.event_id for e in others))
            stored = {
                row[0]: (row[1], row[2])
                for row in con.execute(
                    "SELECT event_id, body_sha256, stream_seq FROM pipeline_event_inbox "
                    f"WHERE event_id IN ({placeholders})",
                    ids,
                ).fetchall()
            }
            for e in others:
                first_sha, first_seq = stored[e.event_id]
                if e.body_sha256 == first_sha or e.stream_seq == first_seq:
                    result.duplicates += 1
                    continue
                result.conflicts += 1
                dead.append(
                    DeadLetter(
                        subject=e.subject,
                        source_subject=e.source_subject,
                        stream_seq=e.stream_seq,
                        received_at=e.received_at,
                        reason=(
                            f"duplicate event_id {e.event_id!r} with a different body; "
                            f"the first one (stream_seq {first_seq}) is kept"
                        ),
                        raw=e.raw,
                        event_id=e.event_id,
                    )
                )
    if dead:
        staged_dead = _dead_table(stream, dead)
        con.register("_staged_dead", staged_dead)
        try:
            con.execute(
                """
                INSERT INTO pipeline_event_dead_letter BY NAME
                SELECT * FROM _staged_dead
                ON CONFLICT (stream, stream_seq) DO NOTHING
                """
            )
        finally:
            con.unregister("_staged_dead")
        result.dead_lettered = len(dead)
    return result


__all__ = [
    "INBOX_SCHEMA",
    "BatchResult",
    "BatchWriter",
    "DuckDBBusyError",
    "backoff_delays",
    "connect",
    "insert_new_rows",
    "run_in_transaction",
    "write_batch",
]
