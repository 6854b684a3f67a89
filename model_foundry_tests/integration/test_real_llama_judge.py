"""The judge against a real llama.cpp ``llama-server`` serving the suite's tiny random GGUF.

The model's text is nonsense. Asked through ``response_format`` with the verdict's JSON
schema (the llama.cpp runtime's request shape), the server's grammar still makes every
answer a verdict that parses; the same asks without the schema show why the constraint is
there: none of them is a verdict, and each cell is held back with its cause, never a pair.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from model_foundry.defs.resources import SlotsResource
from model_foundry.devtools import llama_server
from model_foundry.lib.datasets.preferences import preference_figures
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.llm import LlmRun
from model_foundry.lib.recipes.collect_judge import VERDICT, judge_recipe
from model_foundry.lib.recipes.columns.judge import JudgeColumn
from model_foundry.lib.recipes.generate import Generation
from model_foundry.lib.recipes.judged import judge
from model_foundry.lib.recipes.roles import JudgeSlots
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


@dataclass(frozen=True, kw_only=True)
class Unconstrained(JudgeColumn):
    """The same asks with no schema: what a server without constrained decoding returns."""

    def request_params(self, seed: int) -> dict[str, Any]:
        params = super().request_params(seed)
        params.pop("json_schema", None)
        return params


def _run(db: Path, slots: SlotsResource) -> LlmRun:
    return LlmRun(db, JudgeSlots(slots), run_id=None, asset="test", log=log)


def test_every_constrained_judgement_parses_and_unconstrained_ones_do_not(judge_setup) -> None:
    db, slots = judge_setup["db"], judge_setup["slots"]
    with _run(db, slots) as run:
        judged = judge(run, "d", "v", "grandpa")
        meta = run.batch.metadata()
    asks = 2 * len(TOPICS)
    assert meta["sent"] == asks and meta["failed"] == 0, meta.get("failure_causes")
    rows = judged.rows
    assert len(rows) == asks and judged.written == asks
    unparsed = [r.cause for r in rows if r.status != "ok"]
    assert unparsed == [], unparsed
    assert all(1 <= r.score_a <= 10 and 1 <= r.score_b <= 10 for r in rows)
    assert {r.judge_slot for r in rows} == {"grandpa"}
    figures = preference_figures(db, "d", "v")
    assert figures.both_parsed == len(TOPICS) and figures.pairs + figures.ties == len(TOPICS)

    # The same asks without the schema: new requests (the schema is part of the key) whose
    # nonsense answers hold every cell back with its cause.
    recipe = judge_recipe("d")
    column = recipe.column(VERDICT)
    fields = {f.name: getattr(column, f.name) for f in dataclasses.fields(column)}
    loose = dataclasses.replace(
        recipe, name="judge_d_loose",
        columns=(*recipe.columns[:-1], Unconstrained(**fields)),
    )  # fmt: skip
    with _run(db, slots) as run:
        rows_in = [c.row for c in judged.plan.comparisons]
        outcome = Generation(loose, run, rows_in, "v", None).generate()
        loose_meta = run.batch.metadata()
    assert loose_meta["sent"] == asks
    assert dict(outcome.cells_by_column[VERDICT]) == {"rejected": len(TOPICS)}
    causes = set(outcome.rejected_by_cause)
    assert causes and causes <= {"verdict: unparsed", "verdict: cut_off"}, causes

    # Judged again: every cell is stored, nothing is asked and no row is written twice.
    with _run(db, slots) as run:
        again = judge(run, "d", "v", "grandpa")
        assert not run.batches or run.batch.metadata()["sent"] == 0
    assert again.outcome.cells_reused == len(TOPICS) and again.outcome.llm_cells_asked == 0
    assert again.written == 0
    assert [r.request_key for r in again.rows] == [r.request_key for r in rows]
