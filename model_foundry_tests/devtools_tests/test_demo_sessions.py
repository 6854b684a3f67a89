"""``make demo`` tells the lab's lesson: the idle kindergarten slot, and a flow picture."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest

from model_foundry_tests.pipeline_helpers import clean_env

pytestmark = pytest.mark.timeout(600)


def test_demo_warns_of_the_idle_slot_and_draws_a_flow(tmp_path: Path) -> None:
    data = tmp_path / "data"
    result = subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", "demo"],
        env=clean_env(MODEL_FOUNDRY_DATA_DIR=str(data)),
        capture_output=True,
        text=True,
        timeout=540,
    )
    out = result.stdout
    assert result.returncode == 0, out[-2000:] + result.stderr[-3000:]
    assert re.search(
        r"check live_slots_get_turns: WARNING: kindergarten \(live in profile standard\) got 0 "
        r"of \d+ turns in the last 4 sessions; naughty did \d+%",
        out,
    ), out[-3000:]
    assert re.search(r"session_flow: 4 sessions, [1-9] with uncoordinated parallel work", out)
    drawn = re.search(r"flow of (\S+) drawn to (\S+\.svg)", out)
    assert drawn is not None, out[-3000:]
    picture = Path(drawn.group(2))
    assert picture.is_relative_to(data / "demo") and picture.stat().st_size >= 2048
    assert ET.fromstring(picture.read_bytes()).tag.endswith("svg")
    with duckdb.connect(str(data / "demo" / "model_foundry.duckdb"), read_only=True) as con:
        sums = con.execute(
            "SELECT sum(share) FROM session_routing GROUP BY correlation_id"
        ).fetchall()
    assert len(sums) == 4 and all(abs(s - 1) < 1e-9 for (s,) in sums)
