"""session_flow, session_routing and the routing check, materialized on a real Dagster
instance over a real DuckDB file fed through the inbox and typed tables."""

import base64
import re
from pathlib import Path

import dagster as dg
import pytest

from model_foundry.defs.flow.assets import session_flow, session_routing
from model_foundry.defs.flow.checks import live_slots_get_turns
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings
from model_foundry.lib.flow.render import MAX_METADATA_BYTES
from model_foundry.lib.publish import make_event
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.unit.lib.flow.test_store import ingest, query


def run(db_path: Path, *defs: object) -> dg.ExecuteInProcessResult:
    resources = {
        "duckdb": FoundryDuckDB(database=str(db_path)),
        "slots": SlotsResource(slot_file=str(settings.SHIPPED_SLOT_FILE), profile="standard"),
    }
    with quiet_instance() as instance:
        return dg.materialize(list(defs), resources=resources, instance=instance)


def metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    (mat,) = result.asset_materializations_for_node(asset)
    return {k: v.value for k, v in mat.metadata.items()}


def test_session_flow_metadata_embeds_the_largest_sessions_pictures(db_path: Path) -> None:
    ingest(db_path, sample_events(2000, sessions=4, seed=11))
    result = run(db_path, session_flow)
    meta = metadata(result, "session_flow")
    assert meta["sessions_changed"] == 4 and meta["dagster/row_count"] == 4
    assert meta["uncoordinated_sessions"] == 2 and len(meta["uncoordinated"]) == 2
    pictures = [meta[k] for k in ("flow_1", "flow_2", "flow_3")]
    assert "flow_4" not in meta
    for md in pictures:
        match = re.search(r"!\[flow of ([^\]]+)\]\(data:image/(svg\+xml|png);base64,([^)]+)\)", md)
        assert match is not None and len(md) <= MAX_METADATA_BYTES + 200
        image = base64.b64decode(match.group(3))
        assert len(image) >= 2048
        assert match.group(1) in meta["correlation_ids"]
    # Nothing new: a cheap run that rebuilds nothing and draws nothing.
    again = metadata(run(db_path, session_flow), "session_flow")
    assert again["sessions_changed"] == 0 and "flow_1" not in again


def test_routing_check_warns_when_kindergarten_gets_nothing(db_path: Path) -> None:
    ingest(db_path, sample_events(500, sessions=5, seed=3))
    result = run(db_path, session_routing, live_slots_get_turns)
    meta = metadata(result, "session_routing")
    assert meta["sessions_changed"] == 5
    assert set(meta["turns_by_slot"]) == {"naughty", "grandpa"}
    sums = query(db_path, "SELECT sum(share) FROM session_routing GROUP BY correlation_id")
    assert len(sums) == 5 and all(s == pytest.approx(1.0) for (s,) in sums)
    (check,) = result.get_asset_check_evaluations()
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    assert re.fullmatch(
        r"the orchestrator routed 0 of 200 agent turns to kindergarten \(live in profile "
        r"standard\) in the last 5 sessions; naughty took \d+%, grandpa \d+%",
        check.description or "",
    )


def test_routing_check_is_quiet_when_every_live_worker_slot_works(db_path: Path) -> None:
    events = [
        make_event(
            "llm.chat.persist",
            {
                "messages": [{"role": "assistant", "content": "ok"}],
                "slot": slot,
                "usage": {"prompt_tokens": 10, "completion_tokens": 2},
            },
            f"s{i % 3}",
        )
        for i, slot in enumerate(["naughty", "kindergarten"] * 6)
    ]
    ingest(db_path, events)
    (check,) = run(db_path, session_routing, live_slots_get_turns).get_asset_check_evaluations()
    assert check.passed and check.description is None
    assert check.metadata["turns_by_slot"].value == {"naughty": 6, "kindergarten": 6}
