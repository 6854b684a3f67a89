"""The exporter's session figures: per-slot turns and tokens, flow events, uncoordinated
sessions, read from session_routing and session_flow as their refreshes wrote them."""

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings, storage
from model_foundry.lib.flow.store import refresh_session_flow, refresh_session_routing
from model_foundry.lib.metrics.collector import FoundryCollector
from model_foundry.lib.metrics.figures import read_figures
from model_foundry.lib.metrics.refresher import Refresher
from model_foundry.lib.slots.config import load_slot_file
from model_foundry_tests.unit.lib.flow.test_store import ingest, query


def test_session_turns_tokens_and_flow_reach_prometheus(db_path: Path) -> None:
    ingest(db_path, sample_events(800, sessions=4, seed=6))
    refresh_session_routing(db_path, load_slot_file(settings.SHIPPED_SLOT_FILE))
    refresh_session_flow(db_path)

    def read() -> object:
        with storage.connect(db_path, read_only=True) as con:
            return read_figures(con)

    refresher = Refresher("duckdb", read, interval_s=60)
    refresher.refresh_once()
    registry = CollectorRegistry()
    registry.register(FoundryCollector(refresher))  # type: ignore[arg-type]
    families = {
        f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())
    }
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in families.values()
        for s in f.samples
    }
    turns = dict(query(db_path, "SELECT slot, sum(turns) FROM session_routing GROUP BY slot"))
    assert set(turns) == {"naughty", "grandpa"}
    for slot, n in turns.items():
        assert samples[("model_foundry_session_turns_total", (("slot", slot),))] == n
    ((prompt,),) = query(db_path, "SELECT sum(prompt_tokens) FROM session_routing")
    assert (
        sum(
            v
            for (name, _), v in samples.items()
            if name == "model_foundry_session_prompt_tokens_total"
        )
        == prompt
    )
    ((nodes,),) = query(db_path, "SELECT count(*) FROM flow_nodes")
    ((edges,),) = query(db_path, "SELECT count(*) FROM flow_edges")
    assert samples[("model_foundry_flow_events_total", (("kind", "node"),))] == nodes
    assert samples[("model_foundry_flow_events_total", (("kind", "edge"),))] == edges
    assert samples[("model_foundry_flow_sessions", ())] == 4
    assert samples[("model_foundry_uncoordinated_sessions", ())] == 2
    assert families["model_foundry_session_turns"].type == "counter"
