"""Dataset collection against the slot simulator over real HTTP and real DuckDB files: the
integration tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pandas as pd
import pytest
import yaml

from model_foundry.defs.datasets.assets import dataset_samples
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.devtools.bench.slot_common import get_json
from model_foundry.lib.slots.config import load_slot_file
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.pipeline_helpers import (
    rows,
    write_prompts,
)
from model_foundry_tests.shared.defs.datasets.assets import (
    metadata,
)

pytestmark = pytest.mark.timeout(300)


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

    openai = sorted((out / "ft" / "v1" / "openai").glob("*.jsonl"))
    chat = pd.concat([pd.read_json(p, lines=True) for p in openai], ignore_index=True)
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
    assert not list((out / "ft" / "v2" / "openai").glob("*.jsonl"))
    assert not list(out.glob("ft/*/chat.jsonl"))


def _requests_by_slot(slot_path: Path) -> dict[str, tuple[int, int]]:
    """Per simulated slot: (requests received, sequences answered) so far."""
    out = {}
    for slot in load_slot_file(slot_path).slots.values():
        stats = get_json(slot.base_url.removesuffix("/v1") + "/_sim/stats")
        out[slot.name] = (stats["requests"], stats["completed"])
    return out


def test_samples_go_as_one_request_with_n_and_a_rerun_asks_only_the_missing_one(
    tmp_path: Path, db_path: Path, fast_slots: Path
) -> None:
    """naughty, whose slot file says ``samples_per_request: 3``, takes the samples of one
    prompt as one request with n choices; kindergarten asks one request per sample (the
    default). Either way each choice is a row of its own under its own sample key, and choice j
    carries the seed of sample j."""
    data = yaml.safe_load(fast_slots.read_text(encoding="utf-8"))
    data["slots"]["naughty"]["samples_per_request"] = 3
    slot_path = tmp_path / "slots-n.yaml"
    slot_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    prompts = write_prompts(tmp_path / "prompts" / "p.jsonl", 2)
    config = {
        "name": "n3",
        "version": "v1",
        "prompt_dir": str(prompts.parent),
        "include_chat_sessions": False,
        "samples_per_prompt": 3,
        "output_dir": str(tmp_path / "datasets"),
        "export": False,
    }
    before = _requests_by_slot(fast_slots)
    first = metadata(collect(db_path, slot_path, config))
    after = _requests_by_slot(fast_slots)
    asked = {n: (after[n][0] - before[n][0], after[n][1] - before[n][1]) for n in after}
    # Two prompts x three samples on each role: two requests on naughty, six on kindergarten.
    assert asked["naughty"] == (2, 6) and asked["kindergarten"] == (6, 6), asked
    assert first["samples_written"] == 12

    got = rows(
        db_path,
        "SELECT request_key, role, prompt_id, sample_index, response FROM dataset_samples "
        "WHERE dataset = 'n3' AND version = 'v1' ORDER BY role, prompt_id, sample_index",
    )
    assert len({r[0] for r in got}) == 12
    for _key, _role, _prompt, index, response in got:
        assert response.endswith(f"#{index}"), response

    # One naughty sample's stored answer is lost (its completion and its recipe cell): the
    # next run asks for it alone.
    lost = next(r[0] for r in got if r[1] == "naughty" and r[3] == 1)
    with duckdb.connect(str(db_path)) as con:
        con.execute("DELETE FROM llm_completions WHERE request_key = ?", [lost])
        con.execute("DELETE FROM dataset_recipe_cells WHERE request_key = ?", [lost])
    before = _requests_by_slot(fast_slots)
    again = metadata(collect(db_path, slot_path, {**config, "version": "v2"}))
    after = _requests_by_slot(fast_slots)
    assert again["sent"] == 1 and again["reused_from_store"] == 11
    changed = {n: d for n in after if (d := after[n][0] - before[n][0])}
    assert changed == {"naughty": 1}
    resent = rows(
        db_path,
        "SELECT response FROM dataset_samples WHERE dataset = 'n3' AND version = 'v2' "
        "AND request_key = ?",
        lost,
    )
    assert resent[0][0].endswith("#1")
