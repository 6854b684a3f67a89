"""``make demo``, run once per scenario: the lab's tour, and slots that reject everything.

The tour's run is shared by everything it proves: it keeps to its own data and NATS, warns of
the idle kindergarten slot, draws a session's flow, and ends with a query that works.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest

from model_foundry.devtools import demo as demo_tour
from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.sample_events import planted_secrets_of
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.publish import make_event
from model_foundry_tests.lab_tokens import LabToken, leaks, stored_files
from model_foundry_tests.nats_helpers import publish
from model_foundry_tests.pipeline_helpers import clean_env, slot_simulator_process

pytestmark = pytest.mark.timeout(600)


def demo(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", "demo", *args],
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=540,
    )


def test_demo_keeps_to_its_own_data_warns_of_the_idle_slot_and_draws_a_flow(
    tmp_path: Path, nats_server: LocalNatsServer
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    users_db = data / "model_foundry.duckdb"
    with duckdb.connect(str(users_db)) as con:
        con.execute("CREATE TABLE mine AS SELECT 42 AS answer")
    before = users_db.read_bytes()
    # A user's own NATS with a real event waiting: the demo must not drain it.
    users_nats = NatsClient(servers=nats_server.url)
    users_nats.setup()
    publish(users_nats, [make_event("llm.tool_call", {"tool": "t", "arguments": {}}, "s1")])

    result = demo(MODEL_FOUNDRY_DATA_DIR=str(data), NATS_URL=nats_server.url)
    out = result.stdout
    assert result.returncode == 0, out[-2000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert users_db.read_bytes() == before
    assert users_nats.pending_for("llm.tool_call").num_pending == 1

    assert re.search(
        r"check live_slots_get_turns: WARNING: the orchestrator routed 0 of \d+ agent turns to "
        r"kindergarten \(live in profile standard\) in the last 4 sessions; naughty took \d+%",
        out,
    ), out[-3000:]
    assert re.search(r"session_flow: 4 sessions, [1-9] with uncoordinated parallel work", out)
    drawn = re.search(r"flow of (\S+) drawn to (\S+\.svg)", out)
    assert drawn is not None, out[-3000:]
    picture = Path(drawn.group(2))
    assert picture.is_relative_to(data / "demo") and picture.stat().st_size >= 2048
    assert ET.fromstring(picture.read_bytes()).tag.endswith("svg")
    demo_file = data / "demo" / "model_foundry.duckdb"
    with duckdb.connect(str(demo_file), read_only=True) as con:
        sums = con.execute(
            "SELECT sum(share) FROM session_routing GROUP BY correlation_id"
        ).fetchall()
    assert len(sums) == 4 and all(abs(s - 1) < 1e-9 for (s,) in sums)

    # Figures for people: no Python dict, no double's every digit.
    assert not re.search(r"\{'|\d\.\d{6,}", out), out[-3000:]
    # The sample sessions' planted secrets stay in the demo's DuckDB file: its Dagster
    # instance (event log, runs, stored outputs, compute logs) holds none of them.
    planted = [
        LabToken(kind, value, value)
        for secrets in planted_secrets_of(sessions=demo_tour.SESSIONS, seed=demo_tour.SEED)
        for kind, value in secrets.items()
    ]
    home = data / "demo" / "dagster_home"
    stored = stored_files(home)
    everything = "\n".join(stored.values())
    # What is searched holds the runs' metadata (previews, flow pictures) and compute logs.
    assert "dead_letter_reasons" in everything and "<svg" in everything
    assert any("compute_logs" in Path(place).parts for place in stored)
    assert leaks(stored, planted) == []
    with duckdb.connect(str(data / "demo" / "model_foundry.duckdb"), read_only=True) as con:
        payloads = con.execute("SELECT payload::VARCHAR FROM pipeline_event_inbox").fetchall()
    inbox = "\n".join(p for (p,) in payloads)
    assert all(token.value in inbox for token in planted)

    command = out.strip().splitlines()[-1].strip()
    printed = re.fullmatch(r"MODEL_FOUNDRY_DUCKDB=(\S+) (\S*model-foundry) query (.+)", command)
    assert printed is not None, command
    assert Path(printed.group(1)).absolute().is_relative_to(data / "demo")
    # The hint works as printed: through a shell, from where the demo ran, no venv on PATH.
    summary = subprocess.run(
        command, shell=True, env=clean_env(), capture_output=True, text=True, timeout=120
    )
    assert summary.returncode == 0, summary.stderr
    assert "correlation_id" in summary.stdout


def test_demo_with_slots_that_reject_everything_prints_causes_not_a_traceback(
    tmp_path: Path,
) -> None:
    with slot_simulator_process(
        tmp_path / "sim", speed=50, extra_args=("--error-rate", "1", "--error-status", "400")
    ) as slots:
        result = demo(
            "--events", "40",
            MODEL_FOUNDRY_DATA_DIR=str(tmp_path / "data"), MODEL_FOUNDRY_SLOTS=str(slots),
        )  # fmt: skip
    out = result.stdout
    assert result.returncode == 0, out[-2000:] + result.stderr[-3000:]
    assert "Traceback" not in out + result.stderr
    # No summary was written, so nothing was there to translate.
    assert "session_summaries: 0 written" in out
    assert "session_summary_translations: 0 written (none pending)" in out
    assert "failed: slot kindergarten answered HTTP 400: simulated server error" in out
    lines = out.splitlines()
    dataset = next(i for i, line in enumerate(lines) if line.startswith("dataset collection"))
    assert lines[dataset + 1].strip().startswith("0 samples written from ")
    assert "requests failed" in lines[dataset + 1]
    assert lines[dataset + 2].strip().endswith("answered HTTP 400: simulated server error")
