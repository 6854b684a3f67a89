"""Dataset collection against the slot simulator over real HTTP and real DuckDB files: the
system tests."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from model_foundry.lib import storage
from model_foundry.lib.query import run_query
from model_foundry_tests.pipeline_helpers import (
    count,
    rows,
    slot_simulator_process,
    start_collection,
    stop_process,
    wait_for,
    write_prompts,
)

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def slow_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # About two seconds per request: a collection takes long enough to be killed midway.
    with slot_simulator_process(
        tmp_path_factory.mktemp("slow-sim"), speed=1, extra_args=("--slowdown", "20")
    ) as path:
        yield path


def test_collection_killed_midway_and_run_again_does_each_request_once(
    tmp_path: Path, db_path: Path, slow_slots: Path
) -> None:
    prompt_dir = write_prompts(tmp_path / "prompts" / "p.jsonl", 16).parent
    data_dir = tmp_path / "data"
    proc = start_collection("resume", prompt_dir, db_path, slow_slots, data_dir)
    ok_sql = "SELECT count(*) FROM llm_completions WHERE status = 'ok'"
    try:
        wait_for(lambda: count(db_path, ok_sql) >= 6, 120, "some answers", proc=proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    done_before = count(db_path, ok_sql)
    assert done_before < 32, "the run finished before it was killed; nothing was resumed"
    assert count(db_path, "SELECT count(*) FROM dataset_samples") == 0

    proc = start_collection("resume", prompt_dir, db_path, slow_slots, data_dir)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err[-3000:]
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["reused_from_store"] >= done_before
    assert summary["sent"] == 32 - summary["reused_from_store"]

    per_key = rows(
        db_path,
        "SELECT request_key, count(*) FILTER (WHERE status = 'ok') FROM llm_completions "
        "GROUP BY request_key",
    )
    assert len(per_key) == 32
    assert {n for _, n in per_key} == {1}
    assert count(db_path, "SELECT count(*) FROM dataset_samples WHERE dataset = 'resume'") == 32


def test_two_runs_writing_and_a_reader_querying_at_once_all_succeed(
    tmp_path: Path, db_path: Path, slow_slots: Path
) -> None:
    data_dir = tmp_path / "data"
    # The reader starts at once: give it the tables to read before the writers create them.
    with storage.connect(db_path):
        pass
    procs = {
        name: start_collection(
            name,
            write_prompts(tmp_path / name / "p.jsonl", 6, prefix=name).parent,
            db_path,
            slow_slots,
            data_dir,
        )
        for name in ("left", "right")
    }
    answers: list[str] = []
    try:
        # Query all the while both runs write; each query must answer, none may fail.
        while any(p.poll() is None for p in procs.values()):
            answers.append(
                run_query("SELECT status, count(*) FROM llm_completions GROUP BY 1", db_path)
            )
        outputs = {name: p.communicate(timeout=60) for name, p in procs.items()}
    finally:
        for p in procs.values():
            stop_process(p)
    for name, p in procs.items():
        assert p.returncode == 0, outputs[name][1][-3000:]
    assert len(answers) > 1 and all(a.startswith("┌") and "status" in a for a in answers)
    stats = dict(
        rows(db_path, "SELECT dataset, sum(samples) FROM dataset_stats GROUP BY 1 ORDER BY 1")
    )
    assert stats == {"left": 12, "right": 12}
    assert count(db_path, "SELECT count(DISTINCT run_id) FROM llm_completions") == 2
