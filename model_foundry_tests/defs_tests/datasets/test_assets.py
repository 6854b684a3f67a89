"""Dataset collection against the slot simulator over real HTTP and real DuckDB files.

Export read back with pandas; a collection killed with SIGKILL and run again does each
request once; two collections writing at once while a reader queries all succeed.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import pytest

from model_foundry.defs.datasets.assets import dataset_samples
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib import storage
from model_foundry.lib.datasets.prompts import parse_jsonl, prompt_from_row
from model_foundry.lib.query import run_query
from model_foundry_tests.dagster_helpers import quiet_instance
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


def collect(db_path: Path, slot_path: Path, config: dict[str, Any]) -> dg.ExecuteInProcessResult:
    with quiet_instance() as instance:
        return _collect(db_path, slot_path, config, instance)


def _collect(
    db_path: Path, slot_path: Path, config: dict[str, Any], instance: dg.DagsterInstance
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [dataset_samples],
        instance=instance,
        resources={
            "duckdb": FoundryDuckDB(database=str(db_path)),
            "slots": SlotsResource(slot_file=str(slot_path)),
        },
        run_config={"ops": {"dataset_samples": {"config": config}}},
    )


def metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    m = result.asset_materializations_for_node("dataset_samples")[0].metadata
    return {k: v.value for k, v in m.items()}


def test_prompt_rows_accept_prompt_or_messages_and_name_the_problem() -> None:
    record = prompt_from_row({"id": "x", "prompt": "hi", "system": "be brief"}, "file:a")
    assert record.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    prompts, problems = parse_jsonl(
        '{"prompt": "ok"}\n\n{"prompt": ""}\n[1]\n{"messages": [{"role": "system"}]}\n', "f"
    )
    assert [p.prompt_text for p in prompts] == ["ok"]
    assert problems == [
        "f:3: needs a non-empty 'prompt' string or a 'messages' list",
        "f:4: must be a JSON object",
        "f:5: needs at least one user message",
    ]


def test_export_read_back_with_pandas_holds_what_the_table_holds(
    tmp_path: Path, db_path: Path, fast_slots: Path
) -> None:
    prompts = write_prompts(tmp_path / "prompts" / "p.jsonl", 5)
    out = tmp_path / "datasets"
    config = {
        "name": "ft",
        "version": "v1",
        "prompt_dir": str(prompts.parent),
        "include_chat_sessions": False,
        "samples_per_prompt": 2,
        "output_dir": str(out),
    }
    first = metadata(collect(db_path, fast_slots, config))
    # Five prompts x the two chat roles of the standard profile x two samples.
    assert first["samples_written"] == first["parquet_rows"] == 20
    assert sorted(first["roles"]) == ["kindergarten", "naughty"]
    assert first["export_path"] == str(out / "ft" / "v1")

    table = pd.DataFrame(
        rows(
            db_path,
            "SELECT request_key, prompt_id, role, sample_index, response, slot, is_empty, "
            "is_truncated FROM dataset_samples WHERE dataset = 'ft' AND version = 'v1'",
        ),
        columns=[
            "request_key",
            "prompt_id",
            "role",
            "sample_index",
            "response",
            "slot",
            "is_empty",
            "is_truncated",
        ],
    )
    parquet = pd.read_parquet(out / "ft" / "v1" / "samples.parquet")
    cols = list(table.columns)
    pd.testing.assert_frame_equal(
        parquet[cols].sort_values("request_key").reset_index(drop=True),
        table.sort_values("request_key").reset_index(drop=True),
        check_dtype=False,
    )
    assert parquet["response"].str.startswith("echo: ").all()

    chat = pd.read_json(out / "ft" / "v1" / "chat.jsonl", lines=True)
    assert len(chat) == 20
    last_turns = {m[-1]["content"] for m in chat["messages"]}
    assert last_turns == set(table["response"])
    assert all(m[-1]["role"] == "assistant" and m[0]["role"] == "user" for m in chat["messages"])
    manifest = json.loads((out / "ft" / "v1" / "manifest.json").read_text())
    assert manifest["records"] == sum(manifest["rows_by_split"].values()) == 20
    # Every role's answers to one prompt share a split.
    sides = parquet.groupby("prompt_id")["split"].nunique()
    assert (sides == 1).all() and (parquet["cluster_id"] == parquet["prompt_id"]).all()

    # A finished version is never changed: asked again, it is refused before any slot is.
    with pytest.raises(dg.Failure, match="already exported"):
        collect(db_path, fast_slots, config)

    # Nothing new in an unfinished version: a cheap success that sends nothing.
    quiet = {**config, "version": "v0", "export": False}
    again = metadata(collect(db_path, fast_slots, quiet))
    assert again["sent"] == 0 and again["reused_from_store"] == 20

    # Truncated output is flagged, kept in Parquet and left out of the fine-tuning JSONL.
    short = metadata(collect(db_path, fast_slots, {**config, "version": "v2", "max_tokens": 2}))
    assert short["truncated"] == short["parquet_rows"] == 20
    assert short["jsonl_rows"] == 0 and short["removed_by_filter"] == {"empty": 0, "truncated": 20}
    assert (out / "ft" / "v2" / "chat.jsonl").read_text() == ""


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
