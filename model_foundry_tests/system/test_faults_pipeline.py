"""Faults in the pipeline beyond the drain, with real processes (issue 5, item 1).

- A slot server SIGKILLed in the middle of a dataset collection and brought back on the same
  ports: the collection ends on its own (error rows for the outage, no traceback, no hang),
  a second run finishes the rest, and every request ends with exactly one ``ok`` row.
- The Dagster daemon SIGKILLed (its whole process group: code server and run workers) while
  inbox runs are in flight, then started again: every published event lands in the inbox
  exactly once and no consumer is left with anything pending or unacknowledged.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from model_foundry.defs.inbox.assets import INBOX_SUBJECT_TAG
from model_foundry.defs.inbox.sensors import IN_PROGRESS
from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.ports import free_port, port_open
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings
from model_foundry.lib.events import SUBJECTS
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.slots.config import SHIPPED_SLOT_FILE, load_slot_file, write_slot_file
from model_foundry_tests.nats_helpers import publish
from model_foundry_tests.pipeline_helpers import (
    clean_env,
    count,
    dagster_bin,
    rows,
    slot_simulator_process,
    start_collection,
    stop_process,
    wait_for,
    write_dagster_home,
    write_prompts,
)

pytestmark = pytest.mark.timeout(300)


def _tail(path: Path, n: int = 60) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:])


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL a process and everything in its session, the way a power cut or OOM would."""
    with suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


# ---------------------------------------------------------------------------------------------
# (a) A slot server killed during a dataset job and brought back.

PROMPTS = 16
# The standard profile has two chat roles (naughty, kindergarten): one request per prompt each.
REQUESTS = PROMPTS * 2


@dataclass
class FixedPortSimulator:
    """The slot simulator as a process on ports chosen up front, so it can come back on them."""

    slot_path: Path
    ports: list[int]
    log: Path
    proc: subprocess.Popen[Any] | None = None

    def start(self) -> None:
        # About two seconds per request: the collection lasts long enough to be cut midway.
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "model_foundry.devtools.simulator",
                "--all",
                "--slots",
                str(self.slot_path),
                "--speed",
                "1",
                "--slowdown",
                "20",
            ],
            stdout=self.log.open("a"),
            stderr=subprocess.STDOUT,
            env=clean_env(),
            start_new_session=True,
        )
        proc = self.proc
        wait_for(
            lambda: all(port_open("127.0.0.1", p) for p in self.ports),
            60,
            f"the slot simulator to listen on {self.ports}:\n{_tail(self.log)}",
            proc=proc,
        )

    def kill(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)


@contextmanager
def fixed_port_simulator(work_dir: Path) -> Iterator[FixedPortSimulator]:
    work_dir.mkdir(parents=True, exist_ok=True)
    shipped = load_slot_file(SHIPPED_SLOT_FILE)
    ports = {name: free_port() for name in shipped.slots}
    slot_path = write_slot_file(
        shipped.with_base_urls({n: f"http://127.0.0.1:{p}/v1" for n, p in ports.items()}),
        work_dir / "slots.yaml",
    )
    sim = FixedPortSimulator(slot_path, list(ports.values()), work_dir / "simulator.log")
    try:
        sim.start()
        yield sim
    finally:
        sim.stop()


def _finish(proc: subprocess.Popen[str], timeout_s: float, what: str) -> dict[str, Any]:
    """The collection's summary line; a hang or a crash fails the test with its stderr."""
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop_process(proc)
        raise AssertionError(f"{what} hung: still running after {timeout_s}s") from None
    assert proc.returncode == 0, f"{what} exited {proc.returncode}:\n{err[-3000:]}"
    assert "Traceback" not in err, f"{what} printed a traceback:\n{err[-3000:]}"
    return json.loads(out.strip().splitlines()[-1])


def test_slot_server_killed_during_a_dataset_job_and_brought_back(
    tmp_path: Path, db_path: Path
) -> None:
    prompt_dir = write_prompts(tmp_path / "prompts" / "p.jsonl", PROMPTS).parent
    data_dir = tmp_path / "data"
    ok_sql = "SELECT count(*) FROM llm_completions WHERE status = 'ok'"
    error_sql = "SELECT count(*) FROM llm_completions WHERE status <> 'ok'"
    with fixed_port_simulator(tmp_path / "sim") as sim:
        first = start_collection("outage", prompt_dir, db_path, sim.slot_path, data_dir)
        try:
            # Kill early, in the first wave of answers: the requests in flight then fail at
            # once and outnumber the answers, so the run's error-share stop ends it quickly
            # instead of cooling the slots down for 30 s and retrying.
            wait_for(lambda: count(db_path, ok_sql) >= 1, 120, "a first answer", proc=first)
            sim.kill()
            ok_at_kill = count(db_path, ok_sql)
            assert ok_at_kill < REQUESTS, "the run finished before the slots died"
            # The outage must be seen (and recorded) before the slots come back.
            wait_for(lambda: count(db_path, error_sql) >= 1, 60, "an error row", proc=first)
            sim.start()
            summary_1 = _finish(first, 150, "the collection during the outage")
        finally:
            stop_process(first)
        # Whatever the first run did not answer, a second one does; it resends nothing done.
        second = start_collection("outage", prompt_dir, db_path, sim.slot_path, data_dir)
        try:
            summary_2 = _finish(second, 150, "the collection after the outage")
        finally:
            stop_process(second)

    assert summary_1["requests"] == summary_2["requests"] == REQUESTS
    assert summary_1["ok"] + summary_1["failed"] == REQUESTS
    assert summary_2["failed"] == 0 and summary_2["ok"] == REQUESTS
    assert summary_2["reused_from_store"] == summary_1["ok"] >= ok_at_kill
    assert summary_2["sent"] == REQUESTS - summary_2["reused_from_store"]

    # One row per attempt: the outage left error rows, and each request exactly one ok row.
    assert count(db_path, error_sql) >= 1
    per_key = rows(
        db_path,
        "SELECT request_key, count(*) FILTER (WHERE status = 'ok') FROM llm_completions "
        "GROUP BY request_key",
    )
    assert len(per_key) == REQUESTS
    assert {n for _, n in per_key} == {1}
    # Nothing done twice: no attempt at a request started after its answer.
    assert (
        count(
            db_path,
            "SELECT count(*) FROM llm_completions c JOIN ("
            "  SELECT request_key, started_at FROM llm_completions WHERE status = 'ok'"
            ") ok USING (request_key) WHERE c.started_at > ok.started_at",
        )
        == 0
    )
    samples = rows(
        db_path,
        "SELECT count(*), count(DISTINCT request_key) FROM dataset_samples "
        "WHERE dataset = 'outage' AND version = 'v1'",
    )
    assert samples == [(REQUESTS, REQUESTS)]


# ---------------------------------------------------------------------------------------------
# (b) The Dagster daemon restarted while runs are in flight.

EVENTS = 4000
EVENTS_AFTER = 400
# Messages delivered to a run that dies come back after the consumer's ack_wait: seconds here,
# not the production five minutes, so the restarted daemon's runs can take them over.
SHORT_ACK_WAIT_S = 3.0
# A run left STARTING by the kill is failed by Dagster's run monitoring once it has been
# starting this long, then retried: the shipped dagster.yaml's 60 s, shortened here for the same
# reason as ack_wait. Long enough that a run the restarted daemon launches is not failed
# while its process is still importing on a loaded machine.
SHORT_START_TIMEOUT_S = 20


def _shorten_start_timeout(home: Path) -> None:
    config_path = home / "dagster.yaml"
    config = yaml.safe_load(config_path.read_text())
    assert config["run_monitoring"]["start_timeout_seconds"] > SHORT_START_TIMEOUT_S
    config["run_monitoring"]["start_timeout_seconds"] = SHORT_START_TIMEOUT_S
    config_path.write_text(yaml.safe_dump(config))


def _start_daemon(env: dict[str, str], log: Path) -> subprocess.Popen[Any]:
    return subprocess.Popen(
        [dagster_bin("dagster-daemon"), "run", "-w", "workspace.yaml"],
        cwd=settings.PROJECT_ROOT,
        env=env,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
        # Own process group: SIGKILL to the group takes the code server and run workers too.
        start_new_session=True,
    )


def _runs_by_status(home: Path) -> dict[str, int]:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = instance.get_run_records(
            filters=dg.RunsFilter(tags={INBOX_SUBJECT_TAG: list(SUBJECTS)})
        )
    by_status: dict[str, int] = {}
    for r in records:
        by_status[r.dagster_run.status.value] = by_status.get(r.dagster_run.status.value, 0) + 1
    return by_status


def test_daemon_killed_with_runs_in_flight_and_restarted_loses_nothing(
    tmp_path: Path, nats_server: LocalNatsServer
) -> None:
    # The consumers exist before the daemon starts, so its (default) settings never apply.
    nats = NatsClient(servers=nats_server.url, ack_wait_s=SHORT_ACK_WAIT_S)
    nats.setup()
    assert publish(nats, sample_events(EVENTS, sessions=5, seed=11)) == EVENTS

    db = tmp_path / "data" / "pipeline.duckdb"
    home = write_dagster_home(tmp_path / "dagster_home")
    _shorten_start_timeout(home)
    log = tmp_path / "daemon.log"
    in_flight_sql = "SELECT count(*) FROM pipeline_event_inbox"
    with slot_simulator_process(tmp_path / "sim", speed=50) as slot_path:
        env = clean_env(
            DAGSTER_HOME=str(home),
            NATS_URL=nats_server.url,
            MODEL_FOUNDRY_DATA_DIR=str(tmp_path / "data"),
            MODEL_FOUNDRY_DUCKDB=str(db),
            MODEL_FOUNDRY_SLOTS=str(slot_path),
            MODEL_FOUNDRY_SENSOR_INTERVAL_S="1",
        )
        daemon = _start_daemon(env, log)
        try:
            wait_for(lambda: count(db, in_flight_sql) > 0, 150, "the first inbox rows", proc=daemon)
            _kill_group(daemon)
            stored_at_kill = count(db, in_flight_sql)
            runs_at_kill = _runs_by_status(home)
            # The fault must hit runs that were still working, not a finished drain.
            assert stored_at_kill < EVENTS, runs_at_kill
            in_flight = sum(runs_at_kill.get(s.value, 0) for s in IN_PROGRESS)
            assert in_flight >= 1, runs_at_kill

            daemon = _start_daemon(env, log)
            # New events after the restart, on every subject: the pipeline must go on taking
            # them, so a run left for dead "in progress" cannot block its subject for ever.
            assert publish(nats, sample_events(EVENTS_AFTER, sessions=5, seed=12)) == EVENTS_AFTER

            def drained() -> bool:
                total, distinct = rows(
                    db, "SELECT count(*), count(DISTINCT event_id) FROM pipeline_event_inbox"
                )[0]
                if not total == distinct == EVENTS + EVENTS_AFTER:
                    return False
                return all(
                    (p.num_pending, p.num_ack_pending) == (0, 0)
                    for p in (nats.pending_for(s) for s in SUBJECTS)
                )

            try:
                wait_for(drained, 150, "every event in the inbox, nothing pending", interval_s=1)
            except (TimeoutError, RuntimeError) as exc:
                pending = {s: nats.pending_for(s) for s in SUBJECTS}
                raise AssertionError(
                    f"{exc}\nrows={count(db, in_flight_sql)}/{EVENTS + EVENTS_AFTER} runs at kill="
                    f"{runs_at_kill} runs now={_runs_by_status(home)}\npending={pending}\n"
                    f"--- daemon log ---\n{_tail(log)}"
                ) from None
        finally:
            stop_process(daemon)

    total, distinct = rows(
        db, "SELECT count(*), count(DISTINCT event_id) FROM pipeline_event_inbox"
    )[0]
    assert total == distinct == EVENTS + EVENTS_AFTER
    assert count(db, "SELECT count(*) FROM pipeline_event_dead_letter") == 0
