"""The inbox asset against a real nats-server, real DuckDB files and a real Dagster instance:
the integration tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from model_foundry.defs.inbox.assets import pipeline_event_inbox_record
from model_foundry.defs.resources import FoundryDuckDB, NatsResource
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib.events import SUBJECTS
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import make_event
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.nats_helpers import BOTH_NATS_LINES, publish, publish_raw
from model_foundry_tests.shared.defs.inbox.assets import (
    RECORD_KEYS,
    consumer_counts,
    materialize,
    rows,
)


def test_empty_queue_is_a_successful_zero_event_record(
    nats_client: NatsClient, db_path: Path
) -> None:
    # The regression that started the project: DagsterTypeCheckDidNotPass ... NoneType.
    with quiet_instance() as instance:
        result = materialize(nats_client, db_path, "llm.tool_call", instance)
        assert result.success
        record = result.output_for_node("pipeline_event_inbox_record")
        assert set(record) == RECORD_KEYS
        assert record["received"] == record["inserted"] == record["dead_lettered"] == 0
        assert record["event_ids"] == [] and record["first_stream_seq"] is None
        materialization = result.asset_materializations_for_node("pipeline_event_inbox_record")[0]
        assert materialization.metadata["received"].value == 0
        assert all(check.passed for check in result.get_asset_check_evaluations())


def test_every_event_lands_once_and_republishing_adds_nothing(
    nats_client: NatsClient, db_path: Path
) -> None:
    events = list(sample_events(60, sessions=3))
    chat = [e for e in events if e.subject == "llm.chat.persist"]
    publish(nats_client, events)
    with quiet_instance() as instance:
        for subject in SUBJECTS:
            assert materialize(nats_client, db_path, subject, instance).success
        stored = rows(db_path, "SELECT subject, count(*) FROM pipeline_event_inbox GROUP BY 1")
        assert sum(n for _, n in stored) == 60
        assert dict(stored)["llm.chat.persist"] == len(chat)

        # Same ids again with Nats-Msg-Id: JetStream's duplicate window drops them.
        publish(nats_client, chat)
        # Same bodies without the header (a publisher restart past the window): DuckDB's key.
        publish_raw(nats_client, [(e.subject, e.body) for e in chat])
        result = materialize(nats_client, db_path, "llm.chat.persist", instance)
        record = result.output_for_node("pipeline_event_inbox_record")
        assert record["received"] == len(chat)
        assert record["inserted"] == 0
        assert record["duplicates"] == len(chat)
    assert rows(db_path, "SELECT count(*), count(DISTINCT event_id) FROM pipeline_event_inbox")[
        0
    ] == (60, 60)
    assert consumer_counts(nats_client, "llm.chat.persist") == (0, 0)


def test_metadata_names_events_and_sessions(nats_client: NatsClient, db_path: Path) -> None:
    events = [e for e in sample_events(30, sessions=2) if e.subject == "llm.tool_call"]
    publish(nats_client, events)
    result = materialize(nats_client, db_path, "llm.tool_call")
    metadata = result.asset_materializations_for_node("pipeline_event_inbox_record")[0].metadata
    assert metadata["inserted"].value == len(events)
    listed = metadata["events"].value
    assert {e["event_id"] for e in listed} == {e.event_id for e in events}
    assert all(e["subject"] == "llm.tool_call" and e["correlation_id"] for e in listed)
    assert len(metadata["correlation_ids"].value) == 2
    assert len(metadata["preview"].value.records) == min(10, len(events))


def test_bad_inputs_are_dead_lettered_acked_and_do_not_block_good_ones(
    nats_client: NatsClient, db_path: Path
) -> None:
    def good(i: int) -> bytes:
        return make_event(
            "llm.chat.persist",
            {"messages": [{"role": "user", "content": f"good {i}"}]},
            "sess-good",
            event_id=f"good-{i}",
        ).body

    bad: dict[str, bytes] = {
        "not JSON": b"{this is not json",
        "not UTF-8": b'{"event_id": "\xff\xfe"}',
        "not an object": b'["event_id", "x"]',
        "missing event_id": b'{"correlation_id": "s", "payload": {"messages": []}}',
        "missing correlation_id": b'{"event_id": "b5", "payload": {"messages": []}}',
        "subject disagrees": json.dumps(
            {"event_id": "b6", "correlation_id": "s", "subject": "llm.tool_call", "payload": {}}
        ).encode(),
        "payload not object": b'{"event_id": "b7", "correlation_id": "s", "payload": [1]}',
        "2 MB payload": json.dumps(
            {
                "event_id": "b8",
                "correlation_id": "s",
                "payload": {"messages": [{"role": "user", "content": "x" * 2_000_000}]},
            }
        ).encode(),
    }
    items = [("llm.chat.persist", good(0))]
    for i, data in enumerate(bad.values(), start=1):
        items += [("llm.chat.persist", data), ("llm.chat.persist", good(i))]
    publish_raw(nats_client, items)

    result = materialize(nats_client, db_path, "llm.chat.persist")
    record = result.output_for_node("pipeline_event_inbox_record")
    assert record["inserted"] == len(bad) + 1
    assert record["dead_lettered"] == len(bad)
    assert rows(db_path, "SELECT count(*) FROM pipeline_event_inbox")[0][0] == len(bad) + 1
    dead = rows(
        db_path,
        "SELECT reason, raw, raw_bytes, subject, stream_seq FROM pipeline_event_dead_letter "
        "ORDER BY stream_seq",
    )
    assert len(dead) == len(bad)
    expected_fragments = [
        "not valid JSON",
        "not valid UTF-8",
        "must be a JSON object",
        "event_id is missing",
        "correlation_id is missing",
        "disagrees with the NATS subject",
        "payload must be a JSON object",
        "byte limit",
    ]
    for (reason, raw, raw_bytes, subject, _), fragment, original in zip(
        dead, expected_fragments, bad.values(), strict=True
    ):
        assert fragment in reason
        assert bytes(raw) == original and raw_bytes == len(original)
        assert subject == "llm.chat.persist"
    # Every message, good or bad, was acknowledged: nothing waits for redelivery.
    assert consumer_counts(nats_client, "llm.chat.persist") == (0, 0)


@BOTH_NATS_LINES
def test_legacy_subjects_are_stored_under_new_names(nats_client: NatsClient, db_path: Path) -> None:
    publish(
        nats_client,
        [
            make_event("knowledge.embedding", {"query": "DuckDB"}, "s1", event_id="l1"),
            make_event(
                "knowledge.tool_call", {"tool": "grep", "arguments": {}}, "s1", event_id="l2"
            ),
            make_event("obsidian.semantic_search", {"query": "new"}, "s1", event_id="n1"),
        ],
    )
    with quiet_instance() as instance:
        for subject in ("obsidian.semantic_search", "llm.tool_call"):
            assert materialize(nats_client, db_path, subject, instance).success
    assert rows(
        db_path, "SELECT event_id, subject, source_subject FROM pipeline_event_inbox ORDER BY 1"
    ) == [
        ("l1", "obsidian.semantic_search", "knowledge.embedding"),
        ("l2", "llm.tool_call", "knowledge.tool_call"),
        ("n1", "obsidian.semantic_search", "obsidian.semantic_search"),
    ]


def test_duplicate_id_with_different_body_keeps_first_and_records_conflict(
    nats_client: NatsClient, db_path: Path
) -> None:
    first = make_event("llm.tool_call", {"tool": "grep", "arguments": {}}, "s", event_id="same")
    second = make_event("llm.tool_call", {"tool": "sed", "arguments": {}}, "s", event_id="same")
    publish_raw(nats_client, [("llm.tool_call", first.body), ("llm.tool_call", second.body)])
    record = materialize(nats_client, db_path, "llm.tool_call").output_for_node(
        "pipeline_event_inbox_record"
    )
    assert (record["inserted"], record["conflicts"]) == (1, 1)
    assert rows(db_path, "SELECT payload->>'tool' FROM pipeline_event_inbox") == [("grep",)]
    (reason,) = rows(db_path, "SELECT reason FROM pipeline_event_dead_letter")[0]
    assert "different body" in reason and "first one" in reason


def test_max_events_caps_a_run_and_reports_it(nats_client: NatsClient, db_path: Path) -> None:
    events = [e for e in sample_events(100) if e.subject == "llm.chat.persist"]
    publish(nats_client, events)
    result = dg.materialize(
        [pipeline_event_inbox_record],
        partition_key="llm.chat.persist",
        resources={
            "nats": NatsResource.of(nats_client),
            "duckdb": FoundryDuckDB(database=str(db_path)),
        },
        run_config={
            "ops": {
                "pipeline_event_inbox_record": {
                    "config": {"max_events": 15, "batch_size": 10, "fetch_timeout_s": 0.3}
                }
            }
        },
    )
    record = result.output_for_node("pipeline_event_inbox_record")
    assert record["received"] == 15 and record["capped"] is True
    assert consumer_counts(nats_client, "llm.chat.persist") == (len(events) - 15, 0)


def _drain_config(**config: Any) -> dict[str, Any]:
    return {"ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3, **config}}}}


def test_a_drain_reports_checkpoints_of_what_it_has_committed(
    nats_client: NatsClient, db_path: Path
) -> None:
    # A drain runs for as long as events keep coming; downstream automation only sees
    # materializations, so a running drain reports its commits as it goes.
    events = [e for e in sample_events(100, sessions=4) if e.subject == "llm.chat.persist"]
    publish(nats_client, events)
    resources = {
        "nats": NatsResource.of(nats_client),
        "duckdb": FoundryDuckDB(database=str(db_path)),
    }
    with quiet_instance() as instance:
        result = dg.materialize(
            [pipeline_event_inbox_record],
            partition_key="llm.chat.persist",
            resources=resources,
            instance=instance,
            run_config=_drain_config(batch_size=10, checkpoint_s=0),
        )
        assert result.success
        reported = result.asset_materializations_for_node("pipeline_event_inbox_record")
        flags = [m.metadata["checkpoint"].value for m in reported]
        inserted = [m.metadata["inserted"].value for m in reported]
        # One checkpoint per committed batch of 10, then the run's own materialization.
        assert flags == [True] * 4 + [False]
        assert inserted == [10, 20, 30, 40, 40] and len(events) == 40
        assert {m.partition for m in reported} == {"llm.chat.persist"}
        stored = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=pipeline_event_inbox_record.key, asset_partitions=["llm.chat.persist"]
            ),
            limit=10,
        ).records
        assert len(stored) == 5 and {r.run_id for r in stored} == {result.run_id}

        # A drain shorter than checkpoint_s reports only its end; nothing new, no checkpoint.
        publish(
            nats_client, [e for e in sample_events(50, seed=8) if e.subject == "llm.chat.persist"]
        )
        result = dg.materialize(
            [pipeline_event_inbox_record],
            partition_key="llm.chat.persist",
            resources=resources,
            instance=instance,
            run_config=_drain_config(batch_size=10, checkpoint_s=3600),
        )
        reported = result.asset_materializations_for_node("pipeline_event_inbox_record")
        assert [m.metadata["checkpoint"].value for m in reported] == [False]
        assert reported[0].metadata["inserted"].value == 20


def test_unreachable_nats_is_one_sentence_naming_the_url() -> None:
    from model_foundry.devtools.ports import free_port
    from model_foundry.lib.nats.connection import NatsUnavailableError

    url = f"nats://127.0.0.1:{free_port()}"
    with pytest.raises(NatsUnavailableError) as info:
        NatsClient(servers=url, connect_timeout_s=0.5).setup()
    message = str(info.value)
    assert url in message and "\n" not in message
