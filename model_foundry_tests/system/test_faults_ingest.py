"""Faults during a drain, with real processes: NATS restarts, SIGKILLs, a busy DuckDB file.

Each test publishes good events and a few bad bodies, breaks something while a drain runs,
then drains until the consumer has nothing pending and nothing awaiting an ack, and checks
the promise: every good event exactly once in ``pipeline_event_inbox``, every bad body
exactly once in ``pipeline_event_dead_letter``, nothing lost.
"""

from __future__ import annotations

import asyncio
import hashlib
import queue
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pytest

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.inbox.drain import InboxRecord, drain_subject
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import OutgoingEvent, make_event
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, publish

SUBJECT = "llm.chat.persist"
# Redeliveries of what a killed drain left unacknowledged come back after this; short, so a
# test waits seconds, not the production five minutes.
SHORT_ACK_WAIT_S = 1.0

# A drain in its own process, as a Dagster run is: prints one line per committed batch so
# the test can break things at a known point of the drain.
DRAIN_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from model_foundry.lib.inbox.drain import drain_subject
    from model_foundry.lib.nats.connection import NatsClient

    servers, db, subject, ack_wait, batch = sys.argv[1:6]
    res = NatsClient(servers=servers, ack_wait_s=float(ack_wait), connect_timeout_s=1.0)

    def progress(record):
        print(f"batch {record.batches} received {record.received}", flush=True)

    record = asyncio.run(
        drain_subject(res, db, subject, batch_size=int(batch), fetch_timeout_s=0.5,
                      progress=progress)
    )
    print(f"done received {record.received} inserted {record.inserted}", flush=True)
    """
)


@dataclass
class Workload:
    events: list[OutgoingEvent]
    good_ids: list[str]
    bad_bodies: list[bytes]
    # event_id -> the two bodies published under it; exactly one must be stored.
    conflicts: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)


def workload(
    count: int, *, bad_every: int = 25, conflict_every: int = 0, tag: str = "f"
) -> Workload:
    """``count`` messages on SUBJECT: every ``bad_every``-th breaks the contract, and every
    ``conflict_every``-th reuses an earlier event_id with a different body."""
    load = Workload([], [], [])
    last: OutgoingEvent | None = None
    for i in range(count):
        if i % bad_every == bad_every - 1:
            # Unique bodies, so each dead letter can be matched to what was published.
            body = f'{{"not json": {i}'.encode()
            load.events.append(OutgoingEvent(SUBJECT, "", body))
            load.bad_bodies.append(body)
            continue
        if conflict_every and i % conflict_every == conflict_every - 1 and last is not None:
            copy = make_event(
                SUBJECT,
                {"messages": [{"role": "user", "content": f"conflicting copy {i}"}]},
                "sess-conflict",
                event_id=last.event_id,
            )
            # Without Nats-Msg-Id, as a publisher past JetStream's duplicate window would send.
            load.events.append(OutgoingEvent(SUBJECT, "", copy.body))
            load.conflicts[last.event_id] = (last.body, copy.body)
            last = None
            continue
        event = make_event(
            SUBJECT,
            {"messages": [{"role": "user", "content": f"message {i} 日本語"}]},
            f"sess-{i % 7}",
            event_id=f"{tag}-{i:06d}",
        )
        load.events.append(event)
        load.good_ids.append(event.event_id)
        last = event
    return load


@pytest.fixture
def short_ack_nats(nats_server: LocalNatsServer) -> NatsClient:
    # Consumers take ack_wait from the resource that creates them, so create them here first.
    res = NatsClient(servers=nats_server.url, ack_wait_s=SHORT_ACK_WAIT_S, connect_timeout_s=1.0)
    res.setup()
    return res


def rows(db_path: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(sql).fetchall()


def drain_until_settled(
    res: NatsClient, db_path: Path, *, timeout_s: float = 90.0
) -> list[InboxRecord]:
    """Drain until nothing is pending or awaiting an ack (redeliveries come after ack_wait)."""
    deadline = time.monotonic() + timeout_s
    records: list[InboxRecord] = []
    while True:
        records.append(
            asyncio.run(drain_subject(res, db_path, SUBJECT, batch_size=200, fetch_timeout_s=0.3))
        )
        pending = res.pending_for(SUBJECT)
        if pending.num_pending == 0 and pending.num_ack_pending == 0:
            return records
        assert time.monotonic() < deadline, f"messages still outstanding: {pending}"
        time.sleep(res.ack_wait_s)


def assert_exactly_once(db_path: Path, load: Workload) -> None:
    stored = dict(rows(db_path, "SELECT event_id, body_sha256 FROM pipeline_event_inbox"))
    count = rows(db_path, "SELECT count(*) FROM pipeline_event_inbox")[0][0]
    assert count == len(stored), "an event_id is stored twice"
    missing = set(load.good_ids) - set(stored)
    assert not missing, f"{len(missing)} events lost, e.g. {sorted(missing)[:5]}"
    assert set(stored) == set(load.good_ids)

    dead = [bytes(r[0]) for r in rows(db_path, "SELECT raw FROM pipeline_event_dead_letter")]
    expected_dead = list(load.bad_bodies)
    for event_id, bodies in load.conflicts.items():
        # Whichever copy was committed first is kept (after a crash, redelivery can reorder
        # them); the other is recorded as a conflict. Either way each body is kept once.
        kept = [b for b in bodies if hashlib.sha256(b).hexdigest() == stored[event_id]]
        assert len(kept) == 1, f"{event_id}: stored body is neither published copy"
        expected_dead.append(bodies[1] if kept[0] == bodies[0] else bodies[0])
    assert sorted(dead) == sorted(expected_dead), "dead letters lost or recorded twice"


class DrainProcess:
    """One drain subprocess; ``close()`` kills it if it still runs, so no test leaks it."""

    def __init__(self, script: Path, res: NatsClient, db_path: Path, batch_size: int) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(script),
                res.servers,
                str(db_path),
                SUBJECT,
                str(res.ack_wait_s),
                str(batch_size),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # A reader thread, so waiting for progress is bounded even if the drain goes quiet.
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def wait_for_batches(self, count: int, timeout_s: float = 60.0) -> bool:
        """Wait until ``count`` more batches committed; False if the drain ended first."""
        deadline = time.monotonic() + timeout_s
        batches = 0
        while batches < count:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"drain made no progress in {timeout_s}s: {self.seen[-3:]}")
            if line is None or line.startswith("done "):
                return False
            self.seen.append(line)
            batches += line.startswith("batch ")
        return True

    def kill(self) -> int:
        self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait(timeout=30)

    def finish(self, timeout_s: float = 120.0) -> tuple[int, str]:
        """Wait for the drain to end by itself (a hang fails the test); returns code, stderr."""
        self.proc.wait(timeout=timeout_s)
        assert self.proc.stderr is not None
        return self.proc.returncode, self.proc.stderr.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def drain_script(tmp_path: Path) -> Path:
    script = tmp_path / "drain.py"
    script.write_text(DRAIN_SCRIPT)
    return script


@pytest.fixture
def drains() -> Iterator[list[DrainProcess]]:
    started: list[DrainProcess] = []
    yield started
    for drain in started:
        drain.close()


@BOTH_NATS_LINES
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["stop", "crash"])
def test_nats_restart_mid_drain_loses_and_duplicates_nothing(
    nats_server: LocalNatsServer,
    short_ack_nats: NatsClient,
    db_path: Path,
    drain_script: Path,
    drains: list[DrainProcess],
    stop_signal: signal.Signals,
) -> None:
    load = workload(3000, conflict_every=97)
    publish(short_ack_nats, load.events)
    drain = DrainProcess(drain_script, short_ack_nats, db_path, batch_size=50)
    drains.append(drain)
    assert drain.wait_for_batches(3), "the drain ended before the server went away"

    # Same port and store: JetStream keeps the stream and the consumer's ack state.
    nats_server.stop(sig=stop_signal)
    time.sleep(0.5)
    nats_server.start()

    # The drain rides out the restart or ends with an error a run retry would follow; it
    # must not hang (finish() fails the test after its timeout).
    code, stderr = drain.finish()
    records = drain_until_settled(short_ack_nats, db_path)
    assert_exactly_once(db_path, load)
    assert sum(r.received for r in records) + len(drain.seen) > 0
    print(f"drain exit code {code}; tail of stderr: {stderr[-300:]!r}")


def test_drain_killed_at_random_points_loses_and_duplicates_nothing(
    short_ack_nats: NatsClient,
    db_path: Path,
    drain_script: Path,
    drains: list[DrainProcess],
) -> None:
    seed = 5_2026
    rng = random.Random(seed)
    load = workload(3000, bad_every=40, conflict_every=61)
    publish(short_ack_nats, load.events)
    kills = 0
    for _ in range(12):
        drain = DrainProcess(drain_script, short_ack_nats, db_path, rng.choice([10, 20, 30]))
        drains.append(drain)
        batches = rng.randint(0, 5)
        if batches == 0:
            # Killed while importing, connecting or opening DuckDB.
            time.sleep(rng.uniform(0.2, 1.5))
        elif not drain.wait_for_batches(batches):
            break
        # Lands anywhere in fetch, validation, the DuckDB commit, the acks.
        time.sleep(rng.uniform(0.0, 0.05))
        if drain.kill() == -signal.SIGKILL:
            kills += 1
    assert kills >= 8, f"seed {seed}: only {kills} drains were killed mid-way"

    drain_until_settled(short_ack_nats, db_path)
    assert_exactly_once(db_path, load)


HOLD_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from model_foundry.lib.storage import connect

    db, hold_s, marker = sys.argv[1], float(sys.argv[2]), Path(sys.argv[3])
    # Waits for the drain to let go of the file, as any second writer would, then keeps it.
    with connect(db) as con:
        con.execute("CREATE TABLE IF NOT EXISTS lock_holder AS SELECT 1 AS held")
        print("locked", flush=True)
        time.sleep(hold_s)
        marker.write_text("releasing")
    """
)


def test_drain_waits_for_another_duckdb_writer_and_loses_nothing(
    nats_server: LocalNatsServer, db_path: Path, tmp_path: Path
) -> None:
    # ack_wait above the lock wait, as in production: the wait costs time, not redeliveries.
    res = NatsClient(servers=nats_server.url, ack_wait_s=60.0)
    res.setup()
    first = workload(300, tag="w1")
    second = workload(300, tag="w2")
    publish(res, first.events)

    marker = tmp_path / "released"
    progress_log: list[tuple[int, bool]] = []
    outcome: dict[str, Any] = {}

    def progress(record: InboxRecord) -> None:
        progress_log.append((record.received, marker.exists()))

    def run() -> None:
        try:
            outcome["record"] = asyncio.run(
                drain_subject(
                    res,
                    db_path,
                    SUBJECT,
                    batch_size=50,
                    max_events=600,
                    fetch_timeout_s=60.0,
                    progress=progress,
                )
            )
        except BaseException as exc:
            outcome["error"] = exc

    drain = threading.Thread(target=run)
    drain.start()
    holder: subprocess.Popen[str] | None = None
    try:
        deadline = time.monotonic() + 60
        while not (progress_log and progress_log[-1][0] >= 300):
            assert drain.is_alive() and time.monotonic() < deadline, outcome
            time.sleep(0.05)
        # The drain now waits on NATS with the file released; another writer takes it.
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_SCRIPT, str(db_path), "3.0", str(marker)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        # These arrive while the file is locked: the drain has them in hand and must wait.
        publish(res, second.events)
        drain.join(timeout=120)
        assert not drain.is_alive(), "the drain hung on the locked file"
        assert holder.wait(timeout=30) == 0
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
            holder.wait()
        drain.join(timeout=120)

    assert "error" not in outcome, outcome.get("error")
    record: InboxRecord = outcome["record"]
    assert record.received == 600
    assert record.inserted == len(first.good_ids) + len(second.good_ids)
    assert record.duplicates == 0
    # Every batch of the second wave was committed only after the other writer let go.
    assert all(released for received, released in progress_log if received > 300)
    assert rows(db_path, "SELECT held FROM lock_holder") == [(1,)]
    merged = Workload(
        first.events + second.events,
        first.good_ids + second.good_ids,
        first.bad_bodies + second.bad_bodies,
    )
    assert_exactly_once(db_path, merged)
    pending = res.pending_for(SUBJECT)
    assert (pending.num_pending, pending.num_ack_pending) == (0, 0)
