"""``model-foundry bench e2e``: events at a steady rate through the real sensors and runs.

What a user deploys, on one machine: a ``nats-server``, the slot simulator, and the Dagster
daemon on ``workspace.yaml`` with a throwaway ``DAGSTER_HOME``. A publisher sends events at
``--rate`` per second for ``--seconds``, each stamped with its publish time; the sensors see
them pending and launch inbox runs, which store them, and the automation sensor launches the
downstream runs, which summarise the chat sessions. Eight sessions are active at a time, each
replaced by a new one every ``--session-seconds``. The report gives the sustained rate
(events / time from the first publish to the last row), the delay from publish to row
(p50, p95, max), the delay from publishing a chat event to the first summary row that covers
it (``summary_delay_*``: downstream freshness) and, measured in the same command, the drain's
ceiling from ``bench ingest`` on the same number of events, so the two can be compared.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from model_foundry.devtools.bench.ingest import run_bench_ingest
from model_foundry.devtools.devstack import (
    simulator_process,
    stop_process_group,
    write_dagster_home,
)
from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib import settings, storage
from model_foundry.lib.events import CHAT_PERSIST, FLOW_LINEAGE, SEMANTIC_SEARCH, TOOL_CALL
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.nats.wire import MSG_ID_HEADER
from model_foundry.lib.publish import make_event

_PAYLOADS = {
    CHAT_PERSIST: {"messages": [{"role": "user", "content": "bench e2e"}]},
    TOOL_CALL: {"tool": "grep", "arguments": {"q": "bench"}},
    FLOW_LINEAGE: {"kind": "node", "node_id": "bench"},
    SEMANTIC_SEARCH: {"query": "bench"},
}


ACTIVE_SESSIONS = 8


async def _publish_steady(
    url: str, rate: float, seconds: float, tag: str, session_seconds: float = 60.0
) -> int:
    res = NatsClient(servers=url)
    nc = await res.connect()
    js = nc.jetstream()
    subjects = list(_PAYLOADS)
    total = int(rate * seconds)
    started = time.monotonic()
    for i in range(total):
        # Pace against the schedule, not the previous send, so slow sends do not drift.
        delay = started + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        subject = subjects[i % len(subjects)]
        # Sessions come and go as the orchestrator's do: ACTIVE_SESSIONS at a time, each
        # growing for session_seconds before a new one takes its place.
        generation = int(i / (rate * session_seconds))
        event = make_event(
            subject,
            _PAYLOADS[subject],
            f"bench-{tag}-{generation}-{i % ACTIVE_SESSIONS}",
            event_id=f"{tag}-{i:08d}",
            occurred_at=datetime.now(UTC),
        )
        await js.publish(subject, event.body, headers={MSG_ID_HEADER: event.event_id})
    await nc.close()
    return total


def _stored(db_path: Path, tag: str) -> int:
    if not db_path.exists():
        return 0
    try:
        with storage.connect(db_path, read_only=True) as con:
            return int(
                con.execute(
                    "SELECT count(*) FROM pipeline_event_inbox WHERE starts_with(event_id, ?)",
                    [tag],
                ).fetchone()[0]
            )
    except Exception:  # table not created yet by the first run
        return 0


# Chat events of the run not yet covered by their session's newest summary, per session.
_UNSUMMARISED_SQL = """
WITH chat AS (
    SELECT correlation_id, count(*) AS events FROM pipeline_event_inbox
    WHERE starts_with(event_id, ?) AND subject = ? GROUP BY 1
), covered AS (
    SELECT correlation_id, max(chat_events) AS events FROM session_summaries GROUP BY 1
)
SELECT coalesce(sum(chat.events - coalesce(covered.events, 0)), 0)
FROM chat LEFT JOIN covered USING (correlation_id)
"""

# Publish (occurred_at, stamped at publish time) -> the first summary row whose event_ids
# hold the event, for every chat event of the run.
_SUMMARY_DELAY_SQL = """
WITH chat AS (
    SELECT event_id, epoch(occurred_at) AS published_at FROM pipeline_event_inbox
    WHERE starts_with(event_id, ?) AND subject = ?
), covered AS (
    SELECT u.event_id, min(epoch(s.created_at)) AS summarised_at
    FROM session_summaries AS s, unnest(from_json(s.event_ids, '["VARCHAR"]')) AS u(event_id)
    WHERE starts_with(s.correlation_id, ?)
    GROUP BY 1
)
SELECT quantile_cont(d, 0.5), quantile_cont(d, 0.95), max(d), count(*), count(d)
FROM (SELECT summarised_at - published_at AS d FROM chat LEFT JOIN covered USING (event_id))
"""


def _unsummarised(db_path: Path, tag: str) -> int | None:
    """Chat events of ``tag`` no summary covers yet; None before the first summary run."""
    try:
        with storage.connect(db_path, read_only=True) as con:
            return int(con.execute(_UNSUMMARISED_SQL, [tag, CHAT_PERSIST]).fetchone()[0])
    except Exception:  # the file or the summaries table not created yet
        return None


def _summary_delays(db_path: Path, tag: str) -> dict[str, Any]:
    with storage.connect(db_path, read_only=True) as con:
        p50, p95, worst, chat, covered = con.execute(
            _SUMMARY_DELAY_SQL, [tag, CHAT_PERSIST, f"bench-{tag}"]
        ).fetchone()
    return {
        "summary_delay_p50_s": round(p50, 3) if p50 is not None else None,
        "summary_delay_p95_s": round(p95, 3) if p95 is not None else None,
        "summary_delay_max_s": round(worst, 3) if worst is not None else None,
        "chat_events": chat,
        "unsummarised": chat - covered,
    }


def _start_daemon(stack: ExitStack, home: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """dagster-daemon on the project's workspace, stopped (with its group) when ``stack`` closes."""
    log = (home.parent / "daemon.log").open("w")
    daemon = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "dagster-daemon"),
            "run",
            "-w",
            str(settings.PROJECT_ROOT / "workspace.yaml"),
        ],
        cwd=home,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    stack.callback(log.close)
    stack.callback(stop_process_group, daemon)
    return daemon


def _wait(
    daemon: subprocess.Popen[bytes],
    read: Callable[[], int | None],
    done: Callable[[int | None], bool],
    timeout_s: float,
    every_s: float,
) -> int | None:
    """Poll ``read`` until ``done`` says so or the time runs out; a dead daemon ends the wait."""
    deadline = time.monotonic() + timeout_s
    value = read()
    while not done(value) and time.monotonic() < deadline:
        if daemon.poll() is not None:
            raise RuntimeError(f"dagster-daemon exited ({daemon.returncode})")
        time.sleep(every_s)
        value = read()
    return value


def _inbox_delays(db_path: Path, tag: str) -> dict[str, Any]:
    with storage.connect(db_path, read_only=True) as con:
        p50, p95, worst, first, last, distinct = con.execute(
            """
            SELECT quantile_cont(d, 0.5), quantile_cont(d, 0.95), max(d),
                   min(epoch(occurred_at)), max(epoch(inserted_at)), count(DISTINCT event_id)
            FROM (SELECT *, epoch(inserted_at) - epoch(occurred_at) AS d
                  FROM pipeline_event_inbox WHERE starts_with(event_id, ?))
            """,
            [tag],
        ).fetchone()
    span = (last - first) if first is not None and last is not None else 0.0
    return {
        "seconds": round(span, 3),
        "sustained_events_per_s": round(distinct / span, 1) if span else 0.0,
        "delay_p50_s": round(p50, 3) if p50 is not None else None,
        "delay_p95_s": round(p95, 3) if p95 is not None else None,
        "delay_max_s": round(worst, 3) if worst is not None else None,
        "distinct": distinct or 0,
    }


def _bench_env(tmp: Path, nats_url: str, slot_path: Path, sensor_interval_s: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "MODEL_FOUNDRY_"))}
    env.update(
        DAGSTER_HOME=str(tmp / "dagster_home"),
        NATS_URL=nats_url,
        MODEL_FOUNDRY_DUCKDB=str(tmp / "e2e.duckdb"),
        MODEL_FOUNDRY_DATA_DIR=str(tmp / "data"),
        MODEL_FOUNDRY_SLOTS=str(slot_path),
        MODEL_FOUNDRY_SENSOR_INTERVAL_S=str(sensor_interval_s),
    )
    return env


def run_bench_e2e(
    rate: float,
    seconds: float,
    *,
    timeout_s: float = 300.0,
    sensor_interval_s: int = 1,
    session_seconds: float = 60.0,
) -> dict[str, Any]:
    import dagster as dg

    ceiling = run_bench_ingest(max(int(rate * seconds), 1000), repeat=1)
    tag = uuid.uuid4().hex[:8]
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mf-e2e-")))
        server = stack.enter_context(LocalNatsServer(store_dir=tmp / "nats"))
        NatsClient(servers=server.url).setup()
        db_path = tmp / "e2e.duckdb"
        home = write_dagster_home(tmp / "dagster_home")
        slot_path = stack.enter_context(simulator_process(tmp / "sim"))
        daemon = _start_daemon(
            stack, home, _bench_env(tmp, server.url, slot_path, sensor_interval_s)
        )

        def wait_stored(prefix: str, expected: int) -> int:
            read = partial(_stored, db_path, prefix)
            return _wait(daemon, read, lambda n: (n or 0) >= expected, timeout_s, 0.5) or 0

        def wait_summarised(prefix: str) -> None:
            _wait(daemon, partial(_unsummarised, db_path, prefix), lambda n: n == 0, timeout_s, 2.0)

        # Warm-up: the daemon loads the code location, every sensor launches its first run and
        # the first downstream run summarises; the measurement starts from a running system,
        # as a user's would.
        warm = asyncio.run(_publish_steady(server.url, 4.0, 1.0, f"warm{tag}"))
        wait_stored(f"warm{tag}", warm)
        wait_summarised(f"warm{tag}")
        with dg.DagsterInstance.from_config(str(home)) as instance:
            runs_before = instance.get_runs_count()

        published = asyncio.run(
            _publish_steady(server.url, rate, seconds, tag, session_seconds=session_seconds)
        )
        stored = wait_stored(tag, published)
        wait_summarised(tag)
        freshness = _summary_delays(db_path, tag)
        delays = _inbox_delays(db_path, tag)
        with dg.DagsterInstance.from_config(str(home)) as instance:
            runs = instance.get_runs_count() - runs_before
            downstream_runs = len(
                instance.get_run_records(
                    filters=dg.RunsFilter(
                        tags={"dagster/sensor_name": "model_foundry_automation_sensor"}
                    )
                )
            )
    distinct = delays.pop("distinct")
    sustained = delays["sustained_events_per_s"]
    return {
        "events": published,
        "target_rate": rate,
        "seconds": delays.pop("seconds"),
        "sustained_events_per_s": delays.pop("sustained_events_per_s"),
        "ceiling_events_per_s": ceiling["events_per_s"],
        "ceiling_ratio": round(sustained / ceiling["events_per_s"], 4)
        if ceiling["events_per_s"]
        else None,
        **delays,
        **freshness,
        "stored": stored,
        "lost": published - distinct,
        "runs": runs,
        "downstream_runs": downstream_runs,
        "sensor_interval_s": sensor_interval_s,
    }


def main(args: Any) -> int:
    result = run_bench_e2e(
        args.rate,
        args.seconds,
        timeout_s=args.timeout,
        sensor_interval_s=args.sensor_interval,
        session_seconds=args.session_seconds,
    )
    print(
        json.dumps(result) if args.json else "\n".join(f"{k:>24}: {v}" for k, v in result.items())
    )
    return 0 if result["lost"] == 0 and result["unsummarised"] == 0 else 1


__all__ = ["main", "run_bench_e2e"]
