"""END TO END through the real Dagster daemon and webserver (slow: about a minute each).

One stack per Dagster storage: a nats-server, the slot simulator, ``dagster-daemon run`` and
``dagster-webserver`` on ``workspace.yaml`` with a temporary ``DAGSTER_HOME`` whose storage is
SQLite, then PostgreSQL (a database of the test's own, dropped afterwards). Events are
published and nobody clicks: the inbox sensors launch the drains, the automation condition
sensor launches the downstream assets, and the summaries land in DuckDB. Then a materialization
is launched through the webserver's GraphQL API, the way the UI launches one, and two drains
of one subject launched at once run one after the other (the queued run coordinator's limit).
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.ports import free_port
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.settings import DagsterPostgres
from model_foundry_tests.lab_tokens import (
    lab_tokens,
    leaks,
    planted_dead_letters,
    planted_events,
    searchable,
    stored_files,
)
from model_foundry_tests.nats_helpers import publish, publish_raw
from model_foundry_tests.pipeline_helpers import (
    clean_env,
    count,
    dagster_bin,
    slot_simulator_process,
    stop_process,
    wait_for,
    write_dagster_home,
)
from model_foundry_tests.postgres_helpers import (
    database_text,
    pg_env,
    require_postgres,
    throwaway_database,
)

pytestmark = pytest.mark.timeout(400)

# Trust auth ignores it; it is set so the tests can prove it never shows anywhere.
PG_PASSWORD = "pg-secret-never-shown-7f3a"

EVENTS = 30
SESSIONS = 3
# Fake lab credentials of five kinds, in events of a session of their own.
LAB = lab_tokens(secrets.randbits(32))
LAB_SESSION = "sess-lab"
LAB_EVENTS = planted_events(LAB, LAB_SESSION, "lab")
LAB_DEAD_LETTERS = planted_dead_letters(LAB, "lab")


@dataclass
class Stack:
    home: Path
    db_path: Path
    nats: NatsClient
    webserver_url: str
    logs: Path
    storage: str
    # What a process needs in its environment to open this instance (DAGSTER_PG_*).
    env: dict[str, str]

    @contextmanager
    def instance(self) -> Iterator[dg.DagsterInstance]:
        # The suite's autouse fixture clears DAGSTER_PG_* before every test: set them back.
        with pytest.MonkeyPatch.context() as mp:
            for name, value in self.env.items():
                mp.setenv(name, value)
            with dg.DagsterInstance.from_config(str(self.home)) as instance:
                yield instance


def _tail(path: Path, n: int = 60) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:])


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    if request.param == "sqlite":
        yield from _stack(tmp_path_factory.mktemp("daemon-e2e"), None, {})
        return
    require_postgres()
    with throwaway_database("mf_daemon_e2e") as pg, pytest.MonkeyPatch.context() as mp:
        env = pg_env(pg, PG_PASSWORD)
        # This process initialises the instance before the daemon and the webserver start.
        for name, value in env.items():
            mp.setenv(name, value)
        with_password = dataclasses.replace(pg, password_set=True)
        yield from _stack(tmp_path_factory.mktemp("daemon-e2e-pg"), with_password, env)


def _stack(tmp: Path, pg: DagsterPostgres | None, pg_vars: dict[str, str]) -> Iterator[Stack]:
    procs: list[subprocess.Popen[Any]] = []
    server = LocalNatsServer(store_dir=tmp / "nats")
    server.start()
    try:
        with slot_simulator_process(tmp / "sim", speed=50) as slot_path:
            home = write_dagster_home(tmp / "dagster_home", postgres=pg)
            db_path = tmp / "data" / "pipeline.duckdb"
            env = clean_env(
                **pg_vars,
                DAGSTER_HOME=str(home),
                NATS_URL=server.url,
                MODEL_FOUNDRY_DATA_DIR=str(tmp / "data"),
                MODEL_FOUNDRY_DUCKDB=str(db_path),
                MODEL_FOUNDRY_SLOTS=str(slot_path),
                MODEL_FOUNDRY_SENSOR_INTERVAL_S="2",
            )
            logs = tmp / "logs"
            logs.mkdir()
            port = free_port()
            commands = {
                "daemon": [dagster_bin("dagster-daemon"), "run", "-w", "workspace.yaml"],
                "webserver": [
                    dagster_bin("dagster-webserver"),
                    "-w",
                    "workspace.yaml",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(port),
                ],
            }
            for name, cmd in commands.items():
                log = (logs / f"{name}.log").open("w")
                procs.append(
                    subprocess.Popen(
                        cmd,
                        cwd=settings.PROJECT_ROOT,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        # Own process group: stopping it also stops its code server and runs.
                        start_new_session=True,
                    )
                )
            nats = NatsClient(servers=server.url)
            nats.setup()
            storage = "postgres" if pg else "sqlite"
            yield Stack(home, db_path, nats, f"http://127.0.0.1:{port}", logs, storage, pg_vars)
    finally:
        for proc in procs:
            stop_process(proc)
        server.cleanup()


@pytest.fixture(scope="module")
def fed(stack: Stack) -> Stack:
    """The stack once every event of the module is published: the sample sessions, and the
    lab's session and dead letters with their planted tokens. One pass of the pipeline serves
    the tests that read what it made (a pass is most of a test's time)."""
    publish(stack.nats, sample_events(EVENTS, sessions=SESSIONS, seed=3))
    publish(stack.nats, LAB_EVENTS)
    publish_raw(stack.nats, LAB_DEAD_LETTERS)
    return stack


def test_events_become_summaries_without_anyone_clicking(fed: Stack) -> None:
    stack = fed
    db = stack.db_path
    sessions = SESSIONS + 1  # and the lab's
    try:
        wait_for(
            lambda: (
                count(db, "SELECT count(*) FROM pipeline_event_inbox") == EVENTS + len(LAB_EVENTS)
            ),
            150,
            "the inbox sensors' runs to land every event",
        )
        wait_for(
            lambda: (
                count(db, "SELECT count(DISTINCT correlation_id) FROM session_summaries")
                == sessions
            ),
            150,
            "the automation sensor's run to write the summaries",
        )
        wait_for(
            lambda: count(db, "SELECT count(*) FROM session_summary_translations") >= sessions,
            120,
            "the translations",
        )
    except (TimeoutError, RuntimeError) as exc:
        raise AssertionError(
            f"{exc}\n--- daemon log ---\n{_tail(stack.logs / 'daemon.log')}"
        ) from None
    assert count(db, "SELECT count(*) FROM chat_sessions") == sessions
    assert count(db, "SELECT count(*) FROM llm_completions WHERE status = 'ok'") >= 2 * SESSIONS

    with stack.instance() as instance:
        runs = instance.get_run_records()
        tags = [r.dagster_run.tags for r in runs]
        summaries = instance.get_latest_materialization_event(dg.AssetKey("session_summaries"))
    sensors = {t.get("dagster/sensor_name") for t in tags}
    assert any(s and s.startswith("inbox_") for s in sensors), sensors
    assert "model_foundry_automation_sensor" in sensors, sensors
    # Under the daemon NATS_URL is set, so the runs share slot limits through NATS leases.
    assert summaries is not None and summaries.asset_materialization is not None
    metadata = summaries.asset_materialization.metadata
    assert metadata["slot_limiter"].value == "nats", metadata.get("slot_limiter_detail")


LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
    ... on InvalidSubsetError { message }
    ... on PipelineNotFoundError { message }
  }
}
"""
RUN_STATUS = """
query Status($runId: ID!) {
  runOrError(runId: $runId) { __typename ... on Run { status } }
}
"""


def graphql(url: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"query": query, "variables": variables}).encode()
    request = urllib.request.Request(
        f"{url}/graphql", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        payload = json.loads(response.read())
    assert "errors" not in payload, payload
    return payload["data"]


def _webserver_up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/server_info", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def test_materialization_launched_through_graphql_succeeds(stack: Stack) -> None:
    wait_for(lambda: _webserver_up(stack.webserver_url), 120, "the webserver")
    params = {
        "selector": {
            "repositoryLocationName": "model_foundry",
            "repositoryName": "__repository__",
            "pipelineName": "__ASSET_JOB",
            "assetSelection": [{"path": ["slot_throughput"]}],
        },
        "mode": "default",
        "runConfigData": {"ops": {"slot_throughput": {"config": {"window_hours": 1}}}},
        "executionMetadata": {"tags": [{"key": "launched_by", "value": "graphql-test"}]},
    }
    launched = wait_for(
        lambda: _launch(stack.webserver_url, params), 60, "the code location to load"
    )
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]

    def finished() -> str | None:
        status = graphql(stack.webserver_url, RUN_STATUS, {"runId": run_id})["runOrError"]
        return status["status"] if status["status"] in ("SUCCESS", "FAILURE", "CANCELED") else None

    assert wait_for(finished, 150, f"run {run_id} to finish", interval_s=1) == "SUCCESS"
    with stack.instance() as instance:
        events = instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
    assert len(events) == 1
    materialization = events[0].asset_materialization
    assert materialization.asset_key == dg.AssetKey("slot_throughput")
    assert materialization.metadata["window_hours"].value == 1


def _launch(url: str, params: dict[str, Any]) -> dict[str, Any] | None:
    result = graphql(url, LAUNCH, {"params": params})["launchRun"]
    # The webserver answers before its code location has loaded; ask again until it has.
    if result["__typename"] == "PipelineNotFoundError":
        return None
    return result


def test_two_drains_of_one_subject_launched_at_once_run_one_after_the_other(
    stack: Stack,
) -> None:
    """The queued run coordinator's per-subject limit, on this storage."""
    wait_for(lambda: _webserver_up(stack.webserver_url), 120, "the webserver")
    subject = "obsidian.semantic_search"
    params = {
        "selector": {
            "repositoryLocationName": "model_foundry",
            "repositoryName": "__repository__",
            "pipelineName": "pipeline_event_inbox_job",
        },
        "mode": "default",
        "runConfigData": {
            "ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.2}}}
        },
        "executionMetadata": {
            "tags": [
                {"key": "dagster/partition", "value": subject},
                {"key": "model_foundry/inbox_subject", "value": subject},
            ]
        },
    }
    run_ids = []
    for _ in range(2):
        launched = wait_for(
            lambda: _launch(stack.webserver_url, params), 60, "the code location to load"
        )
        assert launched["__typename"] == "LaunchRunSuccess", launched
        run_ids.append(launched["run"]["runId"])

    def both_finished() -> bool:
        statuses = [
            graphql(stack.webserver_url, RUN_STATUS, {"runId": r})["runOrError"]["status"]
            for r in run_ids
        ]
        return all(s in ("SUCCESS", "FAILURE", "CANCELED") for s in statuses)

    wait_for(both_finished, 240, "both drains to finish", interval_s=1)
    with stack.instance() as instance:
        records = [instance.get_run_record_by_id(r) for r in run_ids]
    assert all(r is not None for r in records)
    assert [r.dagster_run.status for r in records] == [dg.DagsterRunStatus.SUCCESS] * 2
    first, second = sorted(records, key=lambda r: r.start_time or 0)
    assert first.end_time is not None and second.start_time is not None
    assert first.end_time <= second.start_time, (stack.storage, first.end_time, second.start_time)


def _materialized_for(stack: Stack, asset: str, session: str) -> bool:
    """Whether one of ``asset``'s materializations lists ``session`` among those it changed.

    Not only the latest: another drain of the same subject can refresh the upstream table
    again, and the run that follows lists only what changed since (on a loaded machine the
    lab session's run was then no longer the latest when the test looked).
    """
    with stack.instance() as instance:
        records = instance.fetch_materializations(dg.AssetKey(asset), limit=100).records
    for record in records:
        materialization = record.asset_materialization
        listed = materialization.metadata.get("correlation_ids") if materialization else None
        if listed is not None and session in listed.value:
            return True
    return False


def _lab_sessions_through_the_daemon(stack: Stack) -> None:
    """The lab-token events (published by ``fed``) drained by the sensors' runs and
    summarised, and the session's flow and routing materialized by the automation sensor."""
    db = stack.db_path
    try:
        inbox = "SELECT count(*) FROM pipeline_event_inbox WHERE correlation_id = ?"
        dead = "SELECT count(*) FROM pipeline_event_dead_letter WHERE event_id LIKE 'lab-dead-%'"
        wait_for(
            lambda: (
                count(db, inbox, LAB_SESSION) == len(LAB_EVENTS)
                and count(db, dead) == len(LAB_DEAD_LETTERS)
            ),
            150,
            "the inbox sensors' runs to drain the lab's events",
        )
        wait_for(
            lambda: count(
                db, "SELECT count(*) FROM session_summaries WHERE correlation_id = ?", LAB_SESSION
            ),
            150,
            "the lab session's summary",
        )
        for asset in ("session_flow", "session_routing"):
            wait_for(
                lambda asset=asset: _materialized_for(stack, asset, LAB_SESSION),
                150,
                f"{asset} to take in the lab session",
            )
    except (TimeoutError, RuntimeError) as exc:
        raise AssertionError(
            f"{exc}\n--- daemon log ---\n{_tail(stack.logs / 'daemon.log')}"
        ) from None


def _dagster_storage(stack: Stack) -> dict[str, str]:
    """What this instance stored, as text: every file of its home (SQLite, stored outputs,
    compute logs), every table of its PostgreSQL database, the daemon's and webserver's logs
    (the runs' console output)."""
    places = stored_files(stack.home)
    places.update({f"log {p.name}": searchable(p.read_bytes()) for p in stack.logs.glob("*.log")})
    if stack.storage == "postgres":
        places.update(database_text(stack.env["DAGSTER_PG_DB"]))
    return places


def test_the_storage_password_never_reaches_dagster_yaml_the_ui_or_logs(fed: Stack) -> None:
    stack = fed
    wait_for(lambda: _webserver_up(stack.webserver_url), 120, "the webserver")
    config = (stack.home / "dagster.yaml").read_text()
    info = graphql(stack.webserver_url, "{ instance { info } }", {})["instance"]["info"]
    # Nor do the lab's own secrets, which Dagster is shown only scrubbed.
    _lab_sessions_through_the_daemon(stack)
    stored = _dagster_storage(stack)
    assert "[REDACTED:github_token]" in "\n".join(stored.values())  # the search reads the metadata
    assert leaks(stored, LAB.values()) == []
    if stack.storage == "sqlite":
        # Nothing configured: nothing about PostgreSQL anywhere, SQLite as before.
        assert list(yaml.safe_load(config)["storage"]) == ["sqlite"]
        assert "SqliteRunStorage" in info
        return
    assert any(place.endswith(".event_logs") for place in stored), list(stored)
    assert "env: DAGSTER_PG_PASSWORD" in config
    assert PG_PASSWORD not in config
    assert "PostgresRunStorage" in info
    assert PG_PASSWORD not in info
    for log in stack.logs.glob("*.log"):
        assert PG_PASSWORD not in log.read_text(errors="replace"), log.name
