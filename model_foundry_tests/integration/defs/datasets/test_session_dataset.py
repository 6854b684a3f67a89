"""``model-foundry dataset sessions`` as a user runs it: a real process, a real DuckDB inbox of
agent sessions with planted secrets, the export loaded by datasets 3.6 and 5.x: the
integration tests."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from model_foundry.devtools import hf_datasets
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib.exports.layouts import SESSIONS
from model_foundry_tests.hf_loading import load_offline
from model_foundry_tests.shared.defs.datasets.session_dataset import (  # noqa: F401 - fixtures are found by name
    _sessions_cli,
    _store,
    exported_fixture,
)

pytestmark = pytest.mark.timeout(600)

# What the sample sessions plant (devtools/sample_sessions.py), found in the raw events.


def test_a_finished_version_is_refused_in_one_sentence(exported) -> None:
    version = exported["folder"].name
    done = _sessions_cli(exported["data"], exported["db"], "--name", "agents", "--version", version)
    assert done.returncode != 0
    assert "already exported" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_splits_stay_put_when_the_inbox_grows(exported) -> None:
    before = pq.read_table(exported["folder"] / "samples.parquet").to_pylist()
    _store(exported["db"], list(sample_events(300, sessions=6, seed=8)), 10_000)
    done = _sessions_cli(exported["data"], exported["db"], "--name", "agents")
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.splitlines()[0])
    assert folder.name == exported["folder"].name + ".2"
    after = {r["id"]: r for r in pq.read_table(folder / "samples.parquet").to_pylist()}
    assert len(after) > len(before)
    for r in before:
        assert after[r["id"]]["split"] == r["split"], r["id"]


@pytest.mark.parametrize("environment", list(hf_datasets.ENVIRONMENTS))
def test_datasets_loads_the_export_with_tool_calls_intact(exported, environment, tmp_path) -> None:
    folder = exported["folder"]
    result = load_offline(environment, folder, tmp_path / "hf")
    assert result["header"]["license"] == "mit"
    source = pq.read_table(folder / "samples.parquet").to_pylist()
    columns = [f.name for f in SESSIONS.schema]
    for split, rows in result["loaded"]["sessions"].items():
        wanted = [{c: r[c] for c in columns} for r in source if r["kept"] and r["split"] == split]
        assert rows == wanted, split
    calls = [c for rows in result["loaded"]["sessions"].values() for r in rows
             for m in r["messages"] for c in m["tool_calls"]]  # fmt: skip
    assert calls and all(json.loads(c["function"]["arguments"]) is not None for c in calls)


def test_an_independent_corpus_leaves_nothing_in_the_export(tmp_path: Path) -> None:
    """Agent sessions carrying the values of devtools/secrets_corpus/ (written from public
    descriptions of credential files, connection strings and command lines, not from the
    scrubber's rules) through ``model-foundry dataset sessions``: no value survives whole or in
    a fragment anywhere in the export."""
    import json

    from model_foundry.devtools.secrets_corpus import as_events, corpus, evaluate_blob
    from model_foundry.lib.publish import OutgoingEvent

    cases = corpus(7)
    bodies = as_events(cases)
    data = tmp_path / "data"
    db = data / "foundry.duckdb"
    _store(
        db,
        [OutgoingEvent(b["subject"], b["event_id"], json.dumps(b).encode()) for b in bodies],
        1,
    )
    done = _sessions_cli(data, db, "--name", "corpus", "--license", "mit")
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.splitlines()[0])
    exported = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in {".jsonl", ".json", ".md"}
    )
    assert len(exported) > 100_000, "the sessions did not reach the export"
    report = evaluate_blob(cases, exported)
    assert report.recall == 1.0, report.format()
    assert report.fragment_free_share == 1.0, report.format()
