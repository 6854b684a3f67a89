"""One demo-sized pipeline run in process, shared by the telemetry and Prometheus tests.

Sample events over every subject plus contract breaks (dead letters), every subject drained,
typed tables, summaries, translations, throughput, and a small dataset collected and exported:
real nats-server, slot simulator over HTTP, DuckDB file, Dagster instance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from model_foundry.defs.datasets.assets import dataset_samples
from model_foundry.defs.flow.assets import session_flow, session_routing
from model_foundry.defs.inbox.assets import pipeline_event_inbox_record
from model_foundry.defs.inbox_tables.assets import inbox_tables
from model_foundry.defs.resources import FoundryDuckDB, NatsResource, SlotsResource
from model_foundry.defs.summaries.assets import session_summaries, session_summary_translations
from model_foundry.defs.throughput.assets import slot_throughput
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib.events import SUBJECTS
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.nats_helpers import publish, publish_raw
from model_foundry_tests.pipeline_helpers import write_prompts

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


def drain_inbox(res: dict[str, Any], instance: dg.DagsterInstance) -> None:
    """Every subject's inbox partition drained once, in this process."""
    for subject in SUBJECTS:
        assert dg.materialize(
            [pipeline_event_inbox_record],
            partition_key=subject,
            resources=res,
            instance=instance,
            run_config={
                "ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3}}}
            },
        ).success


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
    for subject in SUBJECTS:
        run.add(
            dg.materialize(
                [pipeline_event_inbox_record],
                partition_key=subject,
                resources=res,
                instance=instance,
                run_config={
                    "ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3}}}
                },
            )
        )
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
