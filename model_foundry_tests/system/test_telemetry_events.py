"""Telemetry of a real pipeline run, received by a local HTTP server standing in for Vector.

The receiver decodes newline-delimited JSON as Vector's http_server source is configured to
(deploy/vector/model-foundry.yaml). Every correlation id it gets must be that of inbox rows,
every figure must match DuckDB, and nothing secret from the environment may be in a body.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from model_foundry.defs.inbox.assets import pipeline_event_inbox_record
from model_foundry.defs.summaries.assets import session_summaries
from model_foundry.devtools.sample_events import sample_events
from model_foundry.devtools.telemetry_receiver import TelemetryReceiver, running_receiver
from model_foundry.lib.datasets import dataset_task
from model_foundry.lib.events import CHAT_PERSIST
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.nats_helpers import publish
from model_foundry_tests.pipeline_helpers import (
    PipelineRun,
    count,
    resources,
    rows,
    run_pipeline,
    slot_simulator_process,
)

pytestmark = pytest.mark.timeout(300)

SLOT_KEY = "sk-kindergarten-telemetry-test-7f3a"
RECEIVER_PASSWORD = "vector-pw-telemetry-test-2b9c"


@pytest.fixture(scope="module")
def slot_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with slot_simulator_process(tmp_path_factory.mktemp("sim"), speed=50) as path:
        yield path


@pytest.fixture
def receiver() -> Iterator[TelemetryReceiver]:
    with running_receiver() as r:
        yield r


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_pipeline_events_carry_the_sessions_of_the_inbox_rows(
    nats_client: NatsClient,
    db_path: Path,
    slot_path: Path,
    receiver: TelemetryReceiver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = receiver.url.replace("http://", f"http://lab:{RECEIVER_PASSWORD}@")
    monkeypatch.setenv("MODEL_FOUNDRY_TELEMETRY_URL", url)
    monkeypatch.setenv("KINDERGARTEN_API_KEY", SLOT_KEY)
    with quiet_instance() as instance:
        run = run_pipeline(nats_client, db_path, slot_path, tmp_path, instance)

    events = receiver.events
    assert events, "the receiver got nothing"
    for e in events:
        assert e["event"].startswith("model_foundry.") and e["ts"].endswith("Z")
        assert e["run_id"] and e["asset"]
    run_ids = {rid for ids in run.run_ids.values() for rid in ids}
    assert {e["run_id"] for e in events} <= run_ids

    # Drains: one per subject, figures as stored, dead letters by class.
    drains = receiver.named("model_foundry.inbox_drain")
    assert len(drains) == 4
    assert {d["run_id"] for d in drains} == set(run.run_ids["pipeline_event_inbox_record"])
    assert sum(d["received"] for d in drains) == run.published
    assert sum(d["dead_lettered"] for d in drains) == run.invalid
    classes: Counter[str] = Counter()
    for d in drains:
        classes.update(d["dead_letters_by_class"])
    assert classes == {"not_json": 1, "bad_id": 1, "not_object": 1, "bad_payload": 1}
    assert sum(d["inserted"] for d in drains) == count(
        db_path, "SELECT count(*) FROM pipeline_event_inbox"
    )

    # Sessions of each drain are exactly the inbox rows' correlation ids, with their counts.
    sessions = {
        (e["correlation_id"], e["subject"]): e["inserted"]
        for e in receiver.named("model_foundry.inbox_session")
    }
    stored = rows(
        db_path,
        "SELECT correlation_id, subject, count(*) FROM pipeline_event_inbox GROUP BY ALL",
    )
    assert sessions == {(c, s): n for c, s, n in stored}

    # Every completion attempt, as recorded in llm_completions.
    completions = receiver.named("model_foundry.completion")
    recorded = rows(
        db_path, "SELECT request_key, slot, status, completion_tokens FROM llm_completions"
    )
    assert sorted((c["request_key"], c["slot"], c["status"], c["generation_tokens"])
                  for c in completions) == sorted(recorded)  # fmt: skip
    summarised = {c for (c,) in rows(db_path, "SELECT correlation_id FROM session_summaries")}
    chat_sessions = {
        c for (c,) in rows(db_path, f"SELECT DISTINCT correlation_id FROM pipeline_event_inbox "
                                    f"WHERE subject = '{CHAT_PERSIST}'")
    }  # fmt: skip
    assert summarised == chat_sessions and len(summarised) == 4
    by_task = {
        task: {c["correlation_id"] for c in completions if c["task"] == task}
        for task in {c["task"] for c in completions}
    }
    assert by_task["session_summary"] == summarised
    assert by_task["session_summary_translation"] == summarised
    assert by_task[dataset_task("telemetry")] == {None}
    ok = [c for c in completions if c["status"] == "ok"]
    assert ok and all(c["latency_s"] > 0 and c["prompt_tokens"] > 0 for c in ok)

    # Summaries and translations: the rows written, with who wrote them.
    summaries = {e["correlation_id"]: e["slot"] for e in receiver.named("model_foundry.summary")}
    assert summaries == dict(rows(db_path, "SELECT correlation_id, slot FROM session_summaries"))
    translations = receiver.named("model_foundry.translation")
    assert {t["correlation_id"] for t in translations} == summarised
    assert {(t["source_lang"], t["target_lang"]) for t in translations} <= {
        ("English", "Japanese"),
        ("Japanese", "English"),
    }

    # Each session whose flow was rebuilt, with its figures as session_flow stored them.
    flows = {e["correlation_id"]: e for e in receiver.named("model_foundry.session_flow")}
    stored_flows = rows(
        db_path, "SELECT correlation_id, node_events, edge_events FROM session_flow"
    )
    assert len(flows) == len(stored_flows) == 4
    for cid, node_events, edge_events in stored_flows:
        assert (flows[cid]["node_events"], flows[cid]["edge_events"]) == (node_events, edge_events)

    # The dataset export.
    (export,) = receiver.named("model_foundry.dataset_export")
    samples = count(db_path, "SELECT count(*) FROM dataset_samples")
    assert export["dataset"] == "telemetry" and export["version"] == "v1"
    assert export["rows"] == samples == sum(export["samples_by_role"].values()) > 0

    # What each asset sent is in its metadata; nothing was dropped.
    for asset, metas in run.metadata.items():
        if asset in {
            "chat_messages",
            "chat_sessions",
            "tool_calls",
            "flow_lineage",
            "semantic_searches",
            "slot_throughput",
            "session_routing",
        }:
            continue  # no telemetry of their own: their SQL runs inside DuckDB
        for meta in metas:
            assert meta["telemetry_events_dropped"] == 0, asset
            assert meta["telemetry_events_sent"] > 0, asset
    assert sum(m["telemetry_events_sent"] for ms in run.metadata.values() for m in ms
               if "telemetry_events_sent" in m) == len(events)  # fmt: skip

    assert_plot_metadata(run)

    # Nothing secret: not the slot's API key, not the receiver's password.
    raw = b"".join(receiver.bodies)
    assert SLOT_KEY.encode() not in raw and RECEIVER_PASSWORD.encode() not in raw
    assert all(a and a.startswith("Basic ") for a in receiver.authorizations)


def assert_plot_metadata(run: PipelineRun) -> None:
    """The figures people follow over time are floats, which Dagster's Plots tab draws."""
    drains = run.metadata["pipeline_event_inbox_record"]
    assert all(isinstance(m["events_per_s"], float) for m in drains)
    shares = {m["subject"]: m["dead_letter_share"] for m in drains}
    assert shares == {m["subject"]: round(m["dead_lettered"] / m["received"], 4) for m in drains}
    (summaries,) = run.metadata["session_summaries"]
    assert summaries["error_share"] == 0.0
    assert summaries["gen_tps/kindergarten"] > 0 and summaries["ttft_s/kindergarten"] > 0
    (translations,) = run.metadata["session_summary_translations"]
    assert translations["gen_tps/translator"] > 0
    (throughput,) = run.metadata["slot_throughput"]
    for slot in ("kindergarten", "translator"):
        assert isinstance(throughput[f"gen_tps/{slot}"], float)
        assert throughput[f"ttft_p50_s/{slot}"] > 0 and throughput[f"error_share/{slot}"] == 0.0
    table = throughput["throughput"]
    assert {r.data["slot"] for r in table.records} == {"kindergarten", "translator"}
    assert {c.name for c in table.schema.columns} >= {"runtime", "ttft_p50_s", "errors"}


def test_receiver_down_the_run_succeeds_and_reports_what_it_dropped(
    nats_client: NatsClient,
    db_path: Path,
    slot_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MODEL_FOUNDRY_TELEMETRY_URL", f"http://127.0.0.1:{_closed_port()}/t")
    publish(nats_client, sample_events(12, sessions=3, seed=9))
    res = resources(nats_client, db_path, slot_path)
    with quiet_instance() as instance:
        drained = dg.materialize(
            [pipeline_event_inbox_record],
            partition_key=CHAT_PERSIST,
            resources=res,
            instance=instance,
            run_config={
                "ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3}}}
            },
        )
        assert drained.success
        from model_foundry.defs.inbox_tables.assets import inbox_tables

        summarised = dg.materialize(
            [inbox_tables, session_summaries], resources=res, instance=instance
        )
        assert summarised.success

    drain_meta = drained.asset_materializations_for_node("pipeline_event_inbox_record")[0].metadata
    # One drain event plus one per session, none delivered.
    assert drain_meta["inserted"].value > 0
    assert drain_meta["telemetry_events_sent"].value == 0
    assert drain_meta["telemetry_events_dropped"].value == 1 + 3
    assert drain_meta["telemetry_failed_posts"].value >= 1
    summary_meta = summarised.asset_materializations_for_node("session_summaries")[0].metadata
    assert summary_meta["summaries_written"].value == 3
    assert summary_meta["telemetry_events_sent"].value == 0
    # Three completion attempts and three summaries, all dropped and counted.
    assert summary_meta["telemetry_events_dropped"].value == 3 + 3
    assert count(db_path, "SELECT count(*) FROM session_summaries") == 3
