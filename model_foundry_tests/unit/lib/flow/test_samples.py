"""Sample events tell the lab's story: parallel workers, some never joined, kindergarten idle."""

import json
from collections import defaultdict
from datetime import datetime

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings
from model_foundry.lib.events import CHAT_PERSIST, FLOW_LINEAGE
from model_foundry.lib.flow.graph import EdgeEvent, NodeEvent, build_graph, flow_figures
from model_foundry.lib.flow.routing import ChatTurn, routing_verdict, session_shares
from model_foundry.lib.slots.config import load_slot_file


def bodies(count: int, sessions: int) -> list[dict]:
    return [json.loads(e.body) for e in sample_events(count, sessions=sessions, seed=11)]


def test_sample_sessions_have_parallel_workers_and_half_never_join() -> None:
    events = bodies(2000, sessions=4)
    assert len(events) == 2000
    nodes, edges = defaultdict(list), defaultdict(list)
    for body in events:
        if body["subject"] != FLOW_LINEAGE:
            continue
        p, when = body["payload"], datetime.fromisoformat(body["occurred_at"])
        session = body["correlation_id"]
        if p["kind"] == "node":
            nodes[session].append(NodeEvent(p["node_id"], when, p.get("label"), p.get("slot"),
                                            p.get("role"), p.get("model")))  # fmt: skip
        else:
            edges[session].append(EdgeEvent(p["source"], p["target"], when))
    sessions = sorted(nodes)
    assert len(sessions) == 4
    figures = [flow_figures(build_graph(s, nodes[s], edges[s])) for s in sessions]
    assert [f.uncoordinated for f in figures] == [True, False, True, False]
    for f in figures:
        assert f.parallel_branches >= 3 and f.max_fan_out == 3
        # A step's edge comes before its node: only the newest step can still be unknown.
        assert f.dangling_edges <= 1 and not f.has_cycle
    some_node = next(n for n in nodes[sessions[0]] if n.label == "chat")
    assert (some_node.slot, some_node.role, some_node.model) == (
        "naughty",
        "worker",
        "gemma-4-31b-it-nvfp4",
    )


def test_sample_turns_leave_kindergarten_idle_in_the_standard_profile() -> None:
    turns = []
    for body in bodies(500, sessions=5):
        if body["subject"] == CHAT_PERSIST:
            p, when = body["payload"], datetime.fromisoformat(body["occurred_at"])
            usage = p["usage"]
            turns.append(ChatTurn(body["correlation_id"], when, p.get("slot"), p.get("model"),
                                  usage["prompt_tokens"], usage["completion_tokens"]))  # fmt: skip
    assert any(t.slot is None for t in turns)
    slot_file = load_slot_file(settings.SHIPPED_SLOT_FILE)
    verdict = routing_verdict(turns, slot_file, "standard")
    assert verdict.idle == ("kindergarten",)
    assert verdict.warnings()[0].startswith(
        "the orchestrator routed 0 of 200 agent turns to kindergarten (live in profile "
        "standard) in the last 5 sessions; naughty took "
    )
    # Every turn maps to a slot of the slot file: the model-only ones too.
    assert {r.slot for r in session_shares(turns, slot_file)} == {"naughty", "grandpa"}
