"""Pipeline test helpers: the slot simulator as a process, DuckDB polling, a Dagster home, and
one demo-sized pipeline run in process (shared by the telemetry and Prometheus tests: sample
events over every subject plus contract breaks, every subject drained, typed tables, summaries,
translations, throughput, and a small dataset collected and exported)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

from model_foundry.defs.datasets.assets import dataset_samples
from model_foundry.defs.flow.assets import session_flow, session_routing
from model_foundry.defs.inbox.assets import pipeline_event_inbox_record
from model_foundry.defs.inbox_tables.assets import inbox_tables
from model_foundry.defs.resources import FoundryDuckDB, NatsResource, SlotsResource
from model_foundry.defs.summaries.assets import session_summaries, session_summary_translations
from model_foundry.defs.throughput.assets import slot_throughput
from model_foundry.devtools.devstack import simulator_process
from model_foundry.devtools.devstack import stop_process_group as stop_process  # noqa: F401 - re-export
from model_foundry.devtools.devstack import write_dagster_home as write_dagster_home
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import storage
from model_foundry.lib.events import SUBJECTS
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.nats_helpers import publish, publish_raw

# Settings a developer may have exported; child processes of a test get only the test's own.
FOREIGN_ENV = (
    "NATS_URL",
    "NATS_USER",
    "NATS_PASSWORD",
    "NATS_TOKEN",
    "NATS_CREDS",
    "NATS_TLS_CA",
    "MODEL_FOUNDRY_SLOTS",
    "MODEL_FOUNDRY_EVAL_SETS",
    "MODEL_FOUNDRY_PROFILE",
    "MODEL_FOUNDRY_DUCKDB",
    "MODEL_FOUNDRY_DATA_DIR",
    "DAGSTER_HOME",
    "MODEL_FOUNDRY_TELEMETRY_URL",
    "MODEL_FOUNDRY_SLOT_LIMITER",
    "MODEL_FOUNDRY_SLOT_LEASE_TTL_S",
    "MODEL_FOUNDRY_NATS_REPLICAS",
    "DAGSTER_PG_URL",
    "DAGSTER_PG_HOST",
    "DAGSTER_PG_PORT",
    "DAGSTER_PG_USER",
    "DAGSTER_PG_PASSWORD",
    "DAGSTER_PG_DB",
)


def clean_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
    env.update(overrides)
    return env


def slot_simulator_process(
    work_dir: Path, *, speed: float = 20.0, extra_args: tuple[str, ...] = ()
) -> AbstractContextManager[Path]:
    """Every slot of the shipped file served by a simulator process on free ports.

    Yields the path of a slot file pointing at the ports it really bound.
    """
    return simulator_process(work_dir, speed=speed, extra_args=extra_args, env=clean_env())


def wait_for(
    predicate: Callable[[], Any],
    timeout_s: float,
    what: str,
    *,
    proc: subprocess.Popen[Any] | None = None,
    interval_s: float = 0.2,
) -> Any:
    """Poll until ``predicate()`` is truthy; bounded, never a wall-clock assertion on speed."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} while waiting for {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {timeout_s}s waiting for {what}")
        time.sleep(interval_s)


def count(db_path: Path, sql: str, *params: Any) -> int:
    """A count from the DuckDB file, 0 while the file or the table does not exist yet."""
    if not db_path.exists():
        return 0
    try:
        with storage.connect(db_path, read_only=True) as con:
            row = con.execute(sql, list(params)).fetchone()
    except duckdb.CatalogException:
        return 0
    return int(row[0]) if row and row[0] is not None else 0


def rows(db_path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with storage.connect(db_path, read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def dagster_bin(name: str) -> str:
    return shutil.which(name, path=str(Path(sys.executable).parent)) or name


def write_prompts(path: Path, n: int, prefix: str = "prompt") -> Path:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"{prefix}-{i}", "prompt": f"{prefix} number {i} words"}))
            fh.write("\n")
    return path


def start_collection(
    name: str, prompt_dir: Path, db_path: Path, slot_path: Path, data_dir: Path
) -> subprocess.Popen[str]:
    """A dataset collection in its own process (and process group), as the CLI runs it."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "model_foundry.cli",
            "dataset",
            "collect",
            "--name",
            name,
            "--version",
            "v1",
            "--prompt-dir",
            str(prompt_dir),
            "--no-chat-sessions",
        ],
        env=clean_env(
            MODEL_FOUNDRY_DUCKDB=str(db_path),
            MODEL_FOUNDRY_SLOTS=str(slot_path),
            MODEL_FOUNDRY_DATA_DIR=str(data_dir),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


DOWNSTREAM = [
    inbox_tables,
    session_summaries,
    session_summary_translations,
    slot_throughput,
    session_flow,
    session_routing,
]

# Contract breaks, one of several reason classes each: (NATS subject, body).
INVALID_EVENTS: list[tuple[str, bytes]] = [
    ("llm.chat.persist", b"this is not json"),
    ("llm.tool_call", b'{"correlation_id": "sess-x", "payload": {}}'),
    ("llm.flow.lineage", b"[1, 2, 3]"),
    (
        "obsidian.semantic_search",
        b'{"event_id": "bad-1", "correlation_id": "sess-x", "payload": {"query": 5}}',
    ),
]


@dataclass
class PipelineRun:
    """What the run did: the Dagster runs by asset and their materialization metadata."""

    run_ids: dict[str, list[str]] = field(default_factory=dict)
    metadata: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    published: int = 0
    invalid: int = 0

    def add(self, result: dg.ExecuteInProcessResult) -> None:
        assert result.success
        for event in result.get_asset_materialization_events():
            mat = event.step_materialization_data.materialization
            key = mat.asset_key.to_user_string()
            self.run_ids.setdefault(key, []).append(result.run_id)
            self.metadata.setdefault(key, []).append({k: v.value for k, v in mat.metadata.items()})


def drain_inbox(
    res: dict[str, Any], instance: dg.DagsterInstance
) -> list[dg.ExecuteInProcessResult]:
    """Every subject's inbox partition drained once, in this process."""
    results = []
    for subject in SUBJECTS:
        result = dg.materialize(
            [pipeline_event_inbox_record],
            partition_key=subject,
            resources=res,
            instance=instance,
            run_config={
                "ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3}}}
            },
        )
        assert result.success
        results.append(result)
    return results


def resources(nats: NatsClient, db_path: Path, slot_path: Path) -> dict[str, Any]:
    return {
        "nats": NatsResource.of(nats),
        "duckdb": FoundryDuckDB(database=str(db_path)),
        "slots": SlotsResource(slot_file=str(slot_path)),
    }


def publish_demo_events(nats: NatsClient, events: int, sessions: int, seed: int) -> int:
    publish(nats, sample_events(events, sessions=sessions, seed=seed))
    publish_raw(nats, INVALID_EVENTS)
    return events + len(INVALID_EVENTS)


def run_pipeline(
    nats: NatsClient,
    db_path: Path,
    slot_path: Path,
    work_dir: Path,
    instance: dg.DagsterInstance,
    *,
    events: int = 40,
    sessions: int = 4,
    seed: int = 3,
    dataset_prompts: int = 3,
) -> PipelineRun:
    run = PipelineRun()
    run.published = publish_demo_events(nats, events, sessions, seed)
    run.invalid = len(INVALID_EVENTS)
    res = resources(nats, db_path, slot_path)
    for result in drain_inbox(res, instance):
        run.add(result)
    run.add(dg.materialize(DOWNSTREAM, resources=res, instance=instance))
    prompt_dir = work_dir / "prompts"
    write_prompts(prompt_dir / "p.jsonl", dataset_prompts, prefix="telemetry")
    config = {
        "name": "telemetry",
        "version": "v1",
        "prompt_dir": str(prompt_dir),
        "include_chat_sessions": False,
        "output_dir": str(work_dir / "datasets"),
    }
    run.add(
        dg.materialize(
            [dataset_samples],
            resources={k: v for k, v in res.items() if k != "nats"},
            instance=instance,
            run_config={"ops": {"dataset_samples": {"config": config}}},
        )
    )
    return run
