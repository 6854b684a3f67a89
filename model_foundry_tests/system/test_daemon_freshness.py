"""Summaries keep up while events keep coming, through the real Dagster daemon (a few minutes).

A nats-server, the slot simulator and ``dagster-daemon run`` on ``workspace.yaml``. A publisher
sends realistic events at a steady pace, a new session every few seconds, for the whole
window, so the inbox drains never see a quiet second and never end. At the end of the window,
with publishing still going, at least 90% of the sessions first stored in the window's first
half must have a summary row (and their typed ``chat_sessions`` row).

With ``eager()`` downstream, this got no downstream run at all: its drains are always in
progress (eager waits for them), and a drain that never ends is never materialized.

The window is the larger of WINDOW_FLOOR_S and WINDOW_CYCLES inbox cycles, an inbox cycle
being the time from publishing a warm-up batch to finding it stored (sensor tick, run launch,
drain), measured in this run on this machine. Most of a downstream lag is run launches
too, so on a busy machine the window grows with it instead of the test flaking; the
starvation this guards against leaves the summaries at zero however long the window is.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings
from model_foundry.lib.events import CHAT_PERSIST
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import OutgoingEvent
from model_foundry_tests.nats_helpers import publish
from model_foundry_tests.pipeline_helpers import (
    clean_env,
    count,
    dagster_bin,
    rows,
    slot_simulator_process,
    stop_process,
    wait_for,
    write_dagster_home,
)

SENSOR_INTERVAL_S = 2
RATE = 6.0  # events per second, every subject
SESSION_EVENTS = 25  # a new session every ~4 s
WINDOW_FLOOR_S = 150.0
WINDOW_CAP_S = 480.0
# A session stored in the window's first half must be summarised within the remaining
# half: three inbox cycles. Starvation leaves it unsummarised however many there are.
WINDOW_CYCLES = 6.0
SHARE = 0.9

pytestmark = pytest.mark.timeout(int(WINDOW_CAP_S) + 600)


@dataclass
class Stack:
    home: Path
    db_path: Path
    nats: NatsClient
    daemon_log: Path


@contextmanager
def daemon_stack(tmp: Path) -> Iterator[Stack]:
    with (
        LocalNatsServer(store_dir=tmp / "nats") as server,
        slot_simulator_process(tmp / "sim", speed=50) as slot_path,
    ):
        home = write_dagster_home(tmp / "dagster_home")
        db_path = tmp / "data" / "pipeline.duckdb"
        env = clean_env(
            DAGSTER_HOME=str(home),
            NATS_URL=server.url,
            MODEL_FOUNDRY_DATA_DIR=str(tmp / "data"),
            MODEL_FOUNDRY_DUCKDB=str(db_path),
            MODEL_FOUNDRY_SLOTS=str(slot_path),
            MODEL_FOUNDRY_SENSOR_INTERVAL_S=str(SENSOR_INTERVAL_S),
        )
        nats = NatsClient(servers=server.url)
        nats.setup()
        log_path = tmp / "daemon.log"
        with log_path.open("w") as log:
            daemon = subprocess.Popen(
                [dagster_bin("dagster-daemon"), "run", "-w", "workspace.yaml"],
                cwd=settings.PROJECT_ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Own process group: stopping it also stops its code server and runs.
                start_new_session=True,
            )
            try:
                yield Stack(home, db_path, nats, log_path)
            finally:
                stop_process(daemon)


def session_of(events: list[OutgoingEvent]) -> str:
    return json.loads(events[0].body)["correlation_id"]


class SteadyPublisher(threading.Thread):
    """RATE events a second, paced against the clock, one new session every SESSION_EVENTS."""

    def __init__(self, nats: NatsClient, seconds: float) -> None:
        super().__init__(daemon=True)
        self.nats = nats
        self.seconds = seconds
        self.published = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._publish())
        except BaseException as exc:  # reported by the test
            self.error = exc

    async def _publish(self) -> None:
        total = int(self.seconds * RATE)
        async with self.nats.jetstream() as (_, js):
            started = time.monotonic()
            seed = 1000
            while self.published < total:
                for event in sample_events(SESSION_EVENTS, sessions=1, seed=seed):
                    delay = started + self.published / RATE - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    await js.publish(
                        event.subject, event.body, headers={"Nats-Msg-Id": event.event_id}
                    )
                    self.published += 1
                    if self.published >= total:
                        return
                seed += 1


def warm_up(stack: Stack, seed: int) -> float:
    """Publish one small session; wait for it stored and summarised. Returns the inbox cycle."""
    events = list(sample_events(10, sessions=1, seed=seed))
    session = session_of(events)
    sql = "SELECT count(*) FROM {} WHERE correlation_id = ?"
    started = time.monotonic()
    publish(stack.nats, events)
    wait_for(
        lambda: count(stack.db_path, sql.format("pipeline_event_inbox"), session) == len(events),
        WINDOW_CAP_S,
        "the warm-up events stored",
    )
    cycle = time.monotonic() - started
    wait_for(
        lambda: count(stack.db_path, sql.format("session_summaries"), session) > 0,
        WINDOW_CAP_S,
        "the warm-up summary",
    )
    return cycle


FRESHNESS_SQL = """
WITH stored AS (
    SELECT correlation_id, min(epoch(inserted_at)) AS stored_at
    FROM pipeline_event_inbox WHERE subject = ? GROUP BY 1
), summarised AS (
    SELECT correlation_id, min(epoch(created_at)) AS summarised_at
    FROM session_summaries GROUP BY 1
)
SELECT correlation_id, stored_at, summarised_at, epoch(refreshed_at) AS tabled_at
FROM stored
LEFT JOIN summarised USING (correlation_id)
LEFT JOIN chat_sessions USING (correlation_id)
WHERE stored_at >= ?
ORDER BY stored_at
"""


def runs_timeline(home: Path, t0: float) -> str:
    lines = []
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for record in sorted(instance.get_run_records(), key=lambda r: r.create_timestamp):
            run = record.dagster_run
            lines.append(
                f"{run.job_name} {run.tags.get('dagster/partition', '')} "
                f"assets={len(run.asset_selection or [])} {run.status.value} "
                f"created {record.create_timestamp.timestamp() - t0:+.0f}s "
                f"started {(record.start_time or t0) - t0:+.0f}s "
                f"ended {(record.end_time or t0) - t0:+.0f}s"
            )
            lines += [f"    {step} took {took:.0f}s" for step, took in slow_steps(instance, run)]
    return "\n".join(lines)


def slow_steps(instance: dg.DagsterInstance, run: dg.DagsterRun) -> list[tuple[str, float]]:
    """The run's steps that took over 20 s: where a late summary spent its time."""
    started: dict[str, float] = {}
    slow = []
    for entry in instance.all_logs(run.run_id):
        kind = entry.dagster_event.event_type if entry.dagster_event else None
        if kind == dg.DagsterEventType.STEP_START and entry.step_key:
            started[entry.step_key] = entry.timestamp
        elif kind in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
            took = entry.timestamp - started.get(entry.step_key or "", entry.timestamp)
            if took > 20:
                slow.append((entry.step_key or "?", took))
    return slow


def test_summaries_keep_up_while_events_keep_coming(tmp_path: Path) -> None:
    with daemon_stack(tmp_path) as stack:
        warm_up(stack, seed=1)  # also waits for the daemon to load the code location
        cycle = warm_up(stack, seed=2)
        window = min(max(WINDOW_FLOOR_S, WINDOW_CYCLES * cycle), WINDOW_CAP_S)
        publisher = SteadyPublisher(stack.nats, window)
        t0 = time.time()
        publisher.start()
        publisher.join(window + 120)
        t_end = t0 + window
        daemon_tail = "\n".join(stack.daemon_log.read_text(errors="replace").splitlines()[-40:])
        # The daemon stops here, with the last drains still running: what follows reads only
        # what had happened by the end of the window.
    assert publisher.error is None, f"the publisher failed: {publisher.error!r}"
    assert publisher.published == int(window * RATE)
    sessions = rows(stack.db_path, FRESHNESS_SQL, CHAT_PERSIST, t0)
    first_half = [s for s in sessions if s[1] <= t0 + window / 2]
    summarised = [s for s in first_half if s[2] is not None and s[2] <= t_end]
    tabled = [s for s in first_half if s[3] is not None and s[3] <= t_end]
    report = (
        f"inbox cycle {cycle:.1f}s, window {window:.0f}s, {publisher.published} events, "
        f"{len(sessions)} sessions, {len(first_half)} stored in the first half: "
        f"{len(summarised)} summarised and {len(tabled)} in chat_sessions by the end\n"
        + "\n".join(
            f"{s[0]} stored {s[1] - t0:+.0f}s summarised "
            + (f"{s[2] - t0:+.0f}s" if s[2] is not None else "never")
            for s in first_half
        )
    )
    print(report)
    assert len(first_half) >= 0.4 * window * RATE / SESSION_EVENTS, report
    ok = len(summarised) >= SHARE * len(first_half) and len(tabled) >= SHARE * len(first_half)
    if not ok:
        raise AssertionError(
            f"{report}\n--- runs ---\n{runs_timeline(stack.home, t0)}\n"
            f"--- daemon log at the end of the window ---\n{daemon_tail}"
        )
