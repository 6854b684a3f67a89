"""The judge against a real llama.cpp ``llama-server`` serving the suite's tiny random GGUF.

The model's text is nonsense. Asked through ``response_format`` with the verdict's JSON
schema (the llama.cpp runtime's request shape), the server's grammar still makes every
answer a verdict that parses; the same asks without the schema show why the constraint is
there: none of them is a verdict, and each is recorded with its cause, never as a pair.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from model_foundry.defs.resources import SlotsResource
from model_foundry.devtools import llama_server
from model_foundry.lib import storage
from model_foundry.lib.datasets.judge import (
    Comparison,
    Judgements,
    JudgeSlots,
    plan_comparisons,
    unparsed_causes,
)
from model_foundry.lib.datasets.preferences import preference_figures
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.llm import LlmRun, Request
from model_foundry.lib.tables.datasets import DatasetSampleRow
from model_foundry_tests.slot_fixtures import write_yaml

pytestmark = pytest.mark.timeout(600)

TOPICS = ["zone maps", "row groups", "checkpoints", "vacuum", "MVCC", "compression"]
log = logging.getLogger(__name__)


@pytest.fixture
def judge_setup(llama_server_bin: Path, tiny_model: Path, tmp_path: Path) -> Iterator[dict]:
    with llama_server.running(
        llama_server_bin, tiny_model, ctx=4096, parallel=2, log_dir=tmp_path
    ) as server:
        slot = {
            "runtime": "llamacpp", "base_url": server.base_url, "parallel": 2,
            # No ignore_eos: once the grammar's JSON is complete, only end of text is left.
            "request_defaults": {"max_tokens": 400, "temperature": 0},
        }  # fmt: skip
        data = {
            "default_profile": "standard",
            "slots": {
                "grandpa": {**slot, "model": "tiny-judge"},
                "naughty": {**slot, "model": "tiny-naughty"},
            },
            "profiles": {"standard": ["naughty"]},
        }
        path = write_yaml(tmp_path / "judge-slots.yaml", data)
        db = tmp_path / "judge.duckdb"
        rows = []
        for i, topic in enumerate(TOPICS):
            for role, answer in (
                ("naughty", f"{topic}: per-block statistics the scan reads first."),
                ("kindergarten", f"{topic} are a kind of cache, I think."),
            ):
                rows.append(_sample(f"k{i}-{role}", f"p{i}", role, f"What are {topic}?", answer))
        write_samples(db, rows)
        yield {"db": db, "slots": SlotsResource(slot_file=str(path), limiter="flock")}


def _sample(key: str, prompt_id: str, role: str, question: str, answer: str) -> DatasetSampleRow:
    import json

    return DatasetSampleRow(
        dataset="d", version="v", request_key=key, prompt_id=prompt_id, source="file",
        role=role, sample_index=0,
        messages=json.dumps([{"role": "user", "content": question}]), prompt=question,
        response=answer, reasoning=None, slot=role, model=f"model-{role}", params="{}",
        prompt_tokens=8, completion_tokens=8, finish_reason="stop", is_empty=False,
        is_truncated=False, run_id=None,
    )  # fmt: skip


class Unconstrained(Judgements):
    """The same asks with no schema: what a server without constrained decoding returns."""

    def request(self, item: Comparison) -> Request:
        asked = super().request(item)
        params: Mapping[str, Any] = {k: v for k, v in asked.params.items() if k != "json_schema"}
        return Request(asked.task, asked.role, asked.body, params)


def _judge(
    db: Path, slots: SlotsResource, kind: Judgements, asks: list[Comparison]
) -> tuple[list, dict]:
    with LlmRun(db, JudgeSlots(slots), run_id=None, asset="test", log=log) as run:
        outcome = run.work(kind, asks)
    return outcome.rows, outcome.batch.metadata()


def test_every_constrained_judgement_parses_and_unconstrained_ones_do_not(judge_setup) -> None:
    db, slots = judge_setup["db"], judge_setup["slots"]
    plan = plan_comparisons(db, "d", "v", "grandpa")
    rows, meta = _judge(db, slots, Judgements("d", "v"), plan.comparisons)
    asks = 2 * len(TOPICS)
    assert meta["sent"] == asks and meta["failed"] == 0, meta.get("failure_causes")
    assert len(rows) == asks
    unparsed = [r.cause for r in rows if r.status != "ok"]
    assert unparsed == [], unparsed
    assert all(1 <= r.score_a <= 10 and 1 <= r.score_b <= 10 for r in rows)
    assert {r.judge_slot for r in rows} == {"grandpa"}
    figures = preference_figures(db, "d", "v")
    assert figures.both_parsed == len(TOPICS) and figures.pairs + figures.ties == len(TOPICS)

    # The same asks without the schema: new requests (the schema is part of the key) whose
    # nonsense answers are recorded failures with a cause.
    loose = Unconstrained("d", "v-loose")
    raw, loose_meta = _judge(db, slots, loose, plan.comparisons)
    assert loose_meta["sent"] == asks
    assert [r for r in raw if r.status == "ok"] == []
    assert raw and all(r.cause and r.cause.startswith("the judge's answer") for r in raw)
    causes = unparsed_causes(raw)
    assert sum(causes.values()) == len(raw) and all(c.startswith("the judge") for c in causes)
    with storage.connect(db) as con:
        held = con.execute(
            "SELECT status, count(*) FROM dataset_judgements GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    assert dict(held) == {"ok": asks, "unparsed": len(raw)}

    # A rerun plans nothing, and asks planned again are answered from the completions store.
    rerun = plan_comparisons(db, "d", "v", "grandpa")
    assert rerun.comparisons == [] and rerun.already_asked == asks
    again, again_meta = _judge(db, slots, Judgements("d", "v"), plan.comparisons)
    assert again_meta["sent"] == 0 and again_meta["reused_from_store"] == asks
    assert [r.request_key for r in again] == [r.request_key for r in rows]
