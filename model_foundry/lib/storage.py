"""DuckDB: connecting with lock retries, short transactions, and insert-and-count helpers.

DuckDB lets one process at a time hold a file open for writing. Every writer here therefore
opens the file, writes one batch in one transaction, commits and closes, never holding the
file across a network wait; a process that finds the file locked retries with jittered
backoff, and only after ``lock_timeout_s`` (``MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT``, 120 s)
gives up with one readable sentence. ``held`` runs a few such steps in a row on one
connection, the file attached to the process's in-memory DuckDB and detached after.

Every connection that may write makes sure the file has every table and view first (the
registry in ``lib/tables``), once per process and file.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from model_foundry.lib import settings
from model_foundry.lib.tables import registry

DEFAULT_LOCK_TIMEOUT_S = settings.DEFAULT_DUCKDB_LOCK_TIMEOUT_S

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


def _lock_timeout(given: float | None) -> float:
    """The caller's timeout, else MODEL_FOUNDRY_DUCKDB_LOCK_TIMEOUT, read when it is needed."""
    return settings.duckdb_lock_timeout_s() if given is None else given


def backoff_delays(first: float = 0.02, cap: float = 2.0) -> Iterator[float]:
    """Exponential backoff with full jitter: writers that collided do not collide again."""
    delay = first
    while True:
        yield random.uniform(0, delay)
        delay = min(cap, delay * 2)


_schema_ready: set[tuple[str, int, int]] = set()
_schema_lock = threading.Lock()


@contextmanager
def connect(
    path: str | Path,
    *,
    read_only: bool = False,
    lock_timeout_s: float | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open ``path`` (retrying while another process holds the lock), yield, always close.

    A connection that may write first creates what the file lacks of the registry's tables
    and views and runs its one-time migrations, once per process and file, so no caller
    has to think of it.
    """
    path = Path(path)
    shared = _held_connections().get(str(path))
    if shared is not None:
        # Inside ``held``: this thread's open connection, closed when ``held`` ends.
        yield shared
        return
    lock_timeout_s = _lock_timeout(lock_timeout_s)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    delays = backoff_delays()
    while True:
        try:
            with _attach_lock:
                # Another thread's ``held`` has the file attached: a cursor on it (opening
                # the file a second time in this process is refused).
                con = _attached_cursor(path)
                attached = con is not None
                if con is None:
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
        if not read_only and not attached:
            _ensure_schema(con, path)
        yield con
    finally:
        con.close()
        if attached:
            _release_attached(path)


_held = threading.local()


def _held_connections() -> dict[str, duckdb.DuckDBPyConnection]:
    found: dict[str, duckdb.DuckDBPyConnection] | None = getattr(_held, "connections", None)
    if found is None:
        found = _held.connections = {}
    return found


@contextmanager
def held(path: str | Path, *, lock_timeout_s: float | None = None) -> Iterator[None]:
    """Every ``connect(path)`` in this thread, until the block ends, uses one connection
    opened here (each still runs and commits its own transactions), so a few short writes and
    reads in a row open the file once. Only around work that does not wait on the network:
    the file stays held meanwhile.

    The file is attached to the process's one in-memory DuckDB and detached when the block
    ends, which lets the file go as closing does but costs a tenth of opening it: a new
    DuckDB instance costs about 20 ms of CPU whatever the file holds (its built-in catalog),
    and a recording loop that opens the file twice a batch would spend that per batch.
    ``bench client`` measures it."""
    connections = _held_connections()
    key = str(Path(path))
    if key in connections:
        yield
        return
    with _attached(Path(path), _lock_timeout(lock_timeout_s)) as con:
        connections[key] = con
        try:
            yield
        finally:
            del connections[key]


# The process's in-memory DuckDB that ``held`` attaches files to, and per file (its absolute
# path) the alias it is attached under and how many connections use it. Made again in a
# forked child: a DuckDB instance does not survive a fork. One thread: ``held`` runs small
# reads and writes, and DuckDB's worker threads, woken for each, spin before they sleep,
# which cost a recipe waiting on slow servers a quarter of its CPU (`client_cpu.py`).
_attach_lock = threading.RLock()
_attach_home: tuple[int, duckdb.DuckDBPyConnection] | None = None
_attachments: dict[str, list[Any]] = {}  # path -> [alias, users]
_aliases = iter(range(1, 1 << 62))


def _home() -> duckdb.DuckDBPyConnection:
    global _attach_home, _attachments
    if _attach_home is None or _attach_home[0] != os.getpid():
        _attach_home = (os.getpid(), duckdb.connect(":memory:", config={"threads": 1}))
        _attachments = {}
    return _attach_home[1]


def _attached_cursor(path: Path) -> duckdb.DuckDBPyConnection | None:
    """A new cursor on ``path`` if it is attached here, counted as one more user; call with
    ``_attach_lock`` held."""
    entry = _attachments.get(os.path.abspath(path))
    if entry is None or _attach_home is None or _attach_home[0] != os.getpid():
        return None
    alias = entry[0]
    cursor = _home().cursor()
    cursor.execute(f"USE {alias}")
    entry[1] += 1
    return cursor


def _release_attached(path: Path) -> None:
    with _attach_lock:
        key = os.path.abspath(path)
        entry = _attachments.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _attachments[key]
            alias = entry[0]
            # Detaching checkpoints what the block wrote and lets the file go.
            _home().execute(f"DETACH {alias}")


@contextmanager
def _attached(path: Path, lock_timeout_s: float) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection on ``path`` attached to the in-memory DuckDB (retrying while another
    process holds the file); where this process already has the file open the usual way, a
    connection to that (DuckDB refuses a second open of a file in one process)."""
    if not _schema_is_ready(path):
        # The tables and migrations once per process and file, on a plain connection: the
        # registry's statements assume the file is the connection's only database.
        with connect(path, lock_timeout_s=lock_timeout_s):
            pass
    started = time.monotonic()
    delays = backoff_delays()
    while True:
        with _attach_lock:
            cursor = _attached_cursor(path)
            if cursor is not None:
                break
            home = _home()
            alias = f"mf_file_{next(_aliases)}"
            try:
                quoted = str(path).replace("'", "''")
                home.execute(f"ATTACH '{quoted}' AS {alias}")
            except duckdb.Error as exc:
                if "Unique file handle conflict" in str(exc):
                    break  # open here the usual way: ``connect`` below shares it
                if not _is_lock_error(exc):
                    raise
                waited = time.monotonic() - started
                if waited >= lock_timeout_s:
                    raise DuckDBBusyError(_busy_message(path, waited, exc)) from None
            else:
                _attachments[os.path.abspath(path)] = [alias, 0]
                cursor = _attached_cursor(path)
                break
        time.sleep(next(delays))
    if cursor is None:
        with connect(path, lock_timeout_s=lock_timeout_s) as con:
            yield con
        return
    try:
        yield cursor
    finally:
        cursor.close()
        _release_attached(path)


@contextmanager
def snapshot(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """Run the reads inside one transaction, so all of them see the same state of the file:
    a commit landing between two of them is seen by neither."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    finally:
        con.execute("COMMIT")


def _schema_key(path: Path) -> tuple[str, int, int]:
    # The file's identity, not only its name: a file deleted and created again (a test, a
    # `make clean`) at the same path needs its tables again.
    stat = os.stat(path) if path.exists() else None
    return (str(path.resolve()), stat.st_dev if stat else 0, stat.st_ino if stat else 0)


def _schema_is_ready(path: Path) -> bool:
    return _schema_key(path) in _schema_ready


def _ensure_schema(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    key = _schema_key(path)
    with _schema_lock:
        if key in _schema_ready:
            return
        registry.create_all(con)
        _schema_ready.add(key)


class BatchWriter:
    """Runs transactions against one DuckDB file, opening it only while there is work.

    ``write(work)`` opens the file if needed (waiting out other processes' locks), runs
    ``work(con)`` between BEGIN and COMMIT, and retries the whole unit on a write conflict.
    The connection stays open for the next batch only if the caller already has that batch
    in hand; ``release()`` closes it, and callers call it before any wait of unknown length.
    ``max_hold_s`` caps how long one writer keeps the file, so other runs and a person's
    query get their turn even during a long drain. ``memory_limit`` and ``threads`` are set on
    each connection it opens.

    With ``defer_merges``, closing leaves DuckDB's small row groups as they are unless
    ``merge_at_release()`` asked for the merge. Every close checkpoints, and every checkpoint
    of a table that was appended to merges its trailing small row groups into bigger ones,
    rewriting them and, when three neighbours fit in two, a full row group of history before
    them (DuckDB 2.0, ``RowGroupCollection::ScheduleVacuumTasks``). A writer that commits
    small batches and lets the file go every ``max_hold_s`` would pay that at every close;
    merging once every few hundred commits rewrites each row once instead of again and
    again, and leaves at most that many small row groups in between.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        lock_timeout_s: float | None = None,
        max_hold_s: float = 2.0,
        memory_limit: str | None = None,
        threads: int | None = None,
        defer_merges: bool = False,
    ) -> None:
        self.path = Path(path)
        self.lock_timeout_s = _lock_timeout(lock_timeout_s)
        self.max_hold_s = max_hold_s
        if memory_limit is not None:
            _check_memory_limit(memory_limit)
        self.memory_limit = memory_limit
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
        ):
            raise ValueError(f"threads {threads!r} is not a positive whole number")
        self.threads = threads
        self.defer_merges = defer_merges
        self._merge_next = False
        self._cm: Any = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._own_instance = False
        self._opened_at = 0.0

    def _open(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._cm = connect(self.path, lock_timeout_s=self.lock_timeout_s)
            self._con = self._cm.__enter__()
            self._opened_at = time.monotonic()
            self._own_instance = os.path.abspath(self.path) not in _attachments
            if not self._own_instance:
                # A cursor on the file another thread's ``held`` attached: SET would change
                # that shared in-memory DuckDB for every thread, so its settings stay.
                return self._con
            if self.defer_merges:
                self._con.execute("SET max_vacuum_tasks = 0")
            if self.memory_limit:
                # Left unlimited, DuckDB's cache grows with the table, so a long drain's
                # memory would grow with history.
                set_memory_limit(self._con, self.memory_limit)
            if self.threads:
                # Checked to be a positive int in __init__; SET takes no parameters.
                self._con.execute(f"SET threads = {int(self.threads)}")
        return self._con

    def merge_at_release(self) -> None:
        """Let the checkpoint of the next release merge small row groups (``defer_merges``)."""
        self._merge_next = True

    def release(self) -> None:
        if self._cm is not None:
            cm, con, self._cm, self._con = self._cm, self._con, None, None
            if self.defer_merges and self._merge_next and self._own_instance and con:
                with suppress(duckdb.Error):
                    con.execute("RESET max_vacuum_tasks")
                self._merge_next = False
            cm.__exit__(None, None, None)

    def release_if_held_too_long(self) -> None:
        if self._con is not None and time.monotonic() - self._opened_at >= self.max_hold_s:
            self.release()

    def write(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``work`` in one transaction; ``work`` is re-run after a rolled-back conflict.

        A failed unit raises the error that failed it: once a statement fails, DuckDB answers
        every later one (ROLLBACK included) with "Current transaction is aborted", which
        would otherwise hide the cause, e.g. an OutOfMemoryException.
        """
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
                    raise _first_error(exc) from None
                waited = time.monotonic() - started
                if waited >= self.lock_timeout_s:
                    self.release()
                    raise DuckDBBusyError(_busy_message(self.path, waited, exc)) from None
            except BaseException:
                # Not DuckDB's error (a bug in ``work``, a cancelled thread): the transaction
                # must not stay open on a connection the next batch would reuse.
                _rollback_quietly(con)
                self.release()
                raise
            self.release()
            time.sleep(next(delays))

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    """The database's ``memory_limit`` as DuckDB prints it (``18.8 GiB``)."""
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    return str(row[0]) if row else ""


def _check_memory_limit(limit: str) -> None:
    if not _MEMORY_LIMIT.fullmatch(limit):
        raise ValueError(f"memory limit {limit!r} is not like '64MB' or '1GiB'")


def set_memory_limit(con: duckdb.DuckDBPyConnection, limit: str) -> None:
    """Set the database's ``memory_limit`` (all its connections share it) to a size."""
    _check_memory_limit(limit)
    # Checked above; SET takes no parameters.
    con.execute(f"SET memory_limit = '{limit}'")


def run_in_transaction(
    path: str | Path,
    work: Callable[[duckdb.DuckDBPyConnection], T],
    *,
    lock_timeout_s: float | None = None,
) -> T:
    """Open, run ``work(con)`` inside BEGIN/COMMIT, close; retry the whole unit on conflicts."""
    with BatchWriter(path, lock_timeout_s=lock_timeout_s) as writer:
        return writer.write(work)


def _first_error(exc: BaseException) -> BaseException:
    """The error that aborted the transaction, when ``exc`` only reports that it is aborted.

    Python keeps the exception being handled as ``__context__`` of one raised meanwhile
    (e.g. by cleanup code in a ``finally``), so the cause is down that chain."""
    seen: BaseException = exc
    while "Current transaction is aborted" in str(seen) and seen.__context__ is not None:
        seen = seen.__context__
    return seen


# How far back a stored copy is looked for beyond the time it could first have been written:
# DuckDB's now() is this machine's clock, which a time sync may step back. The inbox's
# duplicate window is the same hour (lib/inbox/dedupe_window.py).
CLOCK_STEP_MARGIN = timedelta(hours=1)


def _rollback_quietly(con: duckdb.DuckDBPyConnection) -> None:
    # A failed statement may already have aborted the transaction; either way we are done.
    with suppress(duckdb.Error):
        con.execute("ROLLBACK")


def insert_new_rows(
    path: str | Path,
    insert_sql: str,
    rows: Sequence[Sequence[Any]],
) -> int:
    """Run ``insert_sql`` (an ``INSERT ... ON CONFLICT DO NOTHING`` with ``?`` parameters)
    for every row in one transaction; returns how many rows were new."""
    if not rows:
        return 0

    def work(con: duckdb.DuckDBPyConnection) -> int:
        # DuckDB reports each INSERT's count, 0 for a row the conflict clause skipped.
        return sum(con.execute(insert_sql, list(row)).fetchone()[0] for row in rows)

    return run_in_transaction(path, work)


__all__ = [
    "CLOCK_STEP_MARGIN",
    "BatchWriter",
    "DuckDBBusyError",
    "backoff_delays",
    "connect",
    "insert_new_rows",
    "memory_limit",
    "run_in_transaction",
    "set_memory_limit",
    "snapshot",
]
