"""Downstream assets in process: real nats-server, slot simulator over HTTP, DuckDB files: the
system tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib.events import (
    CHAT_PERSIST,
    FLOW_LINEAGE,
    SEMANTIC_SEARCH,
    SUBJECTS,
    TOOL_CALL,
)
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import make_event
from model_foundry.lib.slots.config import load_slot_file
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.nats_helpers import publish
from model_foundry_tests.pipeline_helpers import count, drain_inbox, rows
from model_foundry_tests.shared.defs.pipeline_assets import (  # noqa: F401 - fixtures are found by name
    DOWNSTREAM,
    resources,
    slot_path_fixture,
)
from model_foundry_tests.slot_fixtures import set_faults

pytestmark = pytest.mark.timeout(300)


def downstream(res: dict[str, Any], instance: dg.DagsterInstance) -> dict[str, dict[str, Any]]:
    result = dg.materialize(DOWNSTREAM, resources=res, instance=instance)
    assert result.success
    out: dict[str, dict[str, Any]] = {}
    for m in result.get_asset_materialization_events():
        mat = m.step_materialization_data.materialization
        out[mat.asset_key.to_user_string()] = {k: v.value for k, v in mat.metadata.items()}
    return out


def test_inbox_to_summaries_translations_and_throughput(
    nats_client: NatsClient, db_path: Path, slot_path: Path
) -> None:
    events = list(sample_events(40, sessions=4, seed=5))
    by_subject = {s: [e for e in events if e.subject == s] for s in SUBJECTS}
    publish(nats_client, events)
    res = resources(nats_client, db_path, slot_path)
    with quiet_instance() as instance:
        drain_inbox(res, instance)
        meta = downstream(res, instance)

        messages = sum(
            len(json.loads(e.body)["payload"]["messages"]) for e in by_subject[CHAT_PERSIST]
        )
        assert meta["chat_messages"]["added"] == messages
        assert meta["chat_sessions"]["dagster/row_count"] == 4
        assert meta["tool_calls"]["added"] == len(by_subject[TOOL_CALL])
        assert meta["flow_lineage"]["added"] == len(by_subject[FLOW_LINEAGE])
        assert meta["semantic_searches"]["added"] == len(by_subject[SEMANTIC_SEARCH])
        assert count(db_path, "SELECT count(*) FROM flow_nodes") > 0
        assert count(db_path, "SELECT count(*) FROM flow_edges") > 0

        summaries = meta["session_summaries"]
        # The sample agent sessions outgrow the simulator's 1664-token window, so some are
        # summarised in parts: one request per part, then one per session.
        assert summaries["summaries_written"] == 4
        assert summaries["sessions_chunked"] >= 1
        assert summaries["sent"] == 4 + summaries["part_requests"]
        assert summaries["slots_used"] == ["kindergarten"]
        assert summaries["per_slot"]["kindergarten"]["gen_tps"] > 0
        translations = meta["session_summary_translations"]
        assert translations["translations_written"] == 4
        assert translations["slots_used"] == ["translator"]
        for lang, source, target, text in rows(
            db_path,
            "SELECT s.language, t.source_lang, t.target_lang, t.translation "
            "FROM session_summaries s JOIN session_summary_translations t "
            "ON t.summary_key = s.request_key",
        ):
            assert (source, target) == (
                ("Japanese", "English") if lang == "ja" else ("English", "Japanese")
            )
            assert text.startswith(f"[{target}]")
        # Each run counts what the gates held back, as the rows it stored carry it.
        gated = {"session_summaries": summaries, "session_summary_translations": translations}
        for table, made in gated.items():
            stored = rows(db_path, f"SELECT gate, count(*) FROM {table} GROUP BY ALL")
            held = {cause: n for cause, n in stored if cause is not None}
            assert {c: n for c, n in made["held_back_by_gate"].items() if n} == held
            assert sum(n for _, n in stored) == 4
        throughput = meta["slot_throughput"]
        assert throughput["new_snapshot"] is True
        assert set(throughput["gen_tps_per_slot"]) == {
            "kindergarten/gemma-4-26b-a4b-it-iq4_xs",
            "translator/plamo-2-translate",
        }
        overview = rows(
            db_path,
            "SELECT correlation_id, events, summary, translation FROM session_overview",
        )
        assert len(overview) == 4 and all(r[2] and r[3] for r in overview)

        # Nothing new anywhere: every asset succeeds with zero counts and sends nothing.
        again = downstream(res, instance)
        assert again["chat_messages"]["added"] == 0
        assert again["session_summaries"]["sessions_pending"] == 0
        assert again["session_summaries"]["sent"] == 0
        assert again["session_summary_translations"]["summaries_pending"] == 0
        assert again["slot_throughput"]["new_snapshot"] is False

        # New chat in one session while the summary slot rejects requests: an error row, no
        # summary; the next run retries it and succeeds; nothing that succeeded is resent.
        session = json.loads(by_subject[CHAT_PERSIST][0].body)["correlation_id"]
        publish(
            nats_client,
            [
                make_event(
                    CHAT_PERSIST,
                    {"messages": [{"role": "user", "content": "One more question, please."}]},
                    session,
                )
            ],
        )
        drain_inbox(res, instance)
        kindergarten = load_slot_file(slot_path).slots["kindergarten"]
        set_faults(kindergarten, error_rate=1.0, error_status=400)
        try:
            failed = downstream(res, instance)
        finally:
            set_faults(kindergarten, error_rate=0.0)
        assert failed["session_summaries"]["sessions_pending"] == 1
        assert failed["session_summaries"]["failed"] == 1
        assert failed["session_summaries"]["summaries_written"] == 0

        retried = downstream(res, instance)
        # Only what failed or changed is sent: the failed request, and for a session summarised
        # in parts, its reduce; its unchanged parts come from the store.
        summary = retried["session_summaries"]
        assert 1 <= summary["sent"] <= 1 + summary["part_requests"]
        assert summary["sent"] == summary["requests"] - summary["reused_from_store"]
        assert retried["session_summaries"]["summaries_written"] == 1
        assert retried["session_summary_translations"]["translations_written"] == 1

    per_key = rows(
        db_path,
        "SELECT request_key, count(*) FILTER (WHERE status = 'ok'), "
        "count(*) FILTER (WHERE status <> 'ok') FROM llm_completions "
        "WHERE task LIKE 'session_summary%' GROUP BY 1",
    )
    # Every request succeeded exactly once (nothing resent); one of them failed first.
    assert {ok for _, ok, _ in per_key} == {1}
    assert sorted(err for _, _, err in per_key)[-2:] == [0, 1]
    assert count(db_path, "SELECT count(*) FROM session_summaries_latest") == 4
    assert (
        count(
            db_path,
            "SELECT summarised_events FROM session_overview WHERE correlation_id = ?",
            session,
        )
        == len([e for e in by_subject[CHAT_PERSIST] if session.encode() in e.body]) + 1
    )
