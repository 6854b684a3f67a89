"""What a server reused from its prompt cache, through the pipeline's own path (plan, dispatch,
the completions store) into ``llm_completions.cached_prompt_tokens`` and the ``slot_prefill``
view: the slot simulator over real HTTP answers as llama.cpp (``timings.cache_n``) and as a
vLLM started without ``--enable-prompt-tokens-details`` (nothing), into a real DuckDB file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.devtools.simulator import LatencyModel, SlotSimulator, tokenizer
from model_foundry.devtools.simulator.prompt_cache import common_prefix
from model_foundry.lib.llm import CompletionStore, Request
from model_foundry.lib.llm.answer import answer
from model_foundry.lib.llm.request import plan
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.slots.request import build_request
from model_foundry_tests.slot_fixtures import fast_options, run, shipped_data, slot_file_from

# A long shared instruction, then the part that differs: what a family of map requests sends.
INSTRUCTION = "Summarise the session below in two sentences, naming the tools it used. " * 4


def messages(question: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": INSTRUCTION},
        {"role": "user", "content": question},
    ]


def slot_file() -> SlotFile:
    data = shipped_data()
    data["profiles"]["kg_only"] = ["kindergarten"]
    data["profiles"]["vllm_only"] = ["naughty"]
    return slot_file_from(data)


def ask_in_turn(db: Path, questions: list[tuple[str, str]]) -> SlotFile:
    """Each (profile, question) as its own batch, one after the other, as the
    ``kindergarten`` role; returns the simulator's slot file."""

    async def go() -> SlotFile:
        fast = LatencyModel(prompt_tps=1e5, gen_tps=2000.0)
        sf = slot_file()
        async with SlotSimulator(sf, slots=["kindergarten", "naughty"], free_ports=True,
                                 latency=fast) as sim:  # fmt: skip
            store = CompletionStore(db)
            for profile, question in questions:
                request = plan(
                    Request("map", "kindergarten", Body(messages=messages(question))),
                    sim.slot_file,
                    profile,
                )
                batch = await asyncio.to_thread(
                    answer, store, [request], sim.slot_file, profile,
                    options=fast_options(db.parent),
                )  # fmt: skip
                assert batch.results[request.key].content, batch.failed
            return sim.slot_file

    return run(go())


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_llama_cpp_reuse_is_stored_and_vllm_without_details_stays_null(tmp_path: Path) -> None:
    db = tmp_path / "lab.duckdb"
    first, second = "What did session a do?", "What did session b change?"
    sf = ask_in_turn(
        db, [("kg_only", first), ("kg_only", second), ("vllm_only", "What did session c do?")]
    )

    stored = rows(
        db,
        "SELECT slot, prompt_tokens, cached_prompt_tokens, completion_tokens "
        "FROM llm_completions ORDER BY recorded_at",
    )
    assert [(r[0], r[2]) for r in stored] == [
        ("kindergarten", 0),  # a fresh server holds nothing
        ("kindergarten", stored[1][2]),
        ("naughty", None),
    ]
    # The second request landed in the place that held the first (llama-server's choice by
    # prompt similarity) and reused their common prefix: the instruction, not the question.
    slot = sf.slots["kindergarten"]
    sent = [
        tokenizer.chat_pieces(build_request(slot, Body(messages=messages(q)))["messages"])
        for q in (first, second)
    ]
    shared = common_prefix(*sent)
    assert tokenizer.count(INSTRUCTION) < shared < len(sent[1])
    assert stored[1][:3] == ("kindergarten", len(sent[1]), shared)

    prefill = {
        r[0]: r[1:]
        for r in rows(
            db,
            "SELECT slot, attempts, reported, cached_prompt_tokens, prefill_per_generated_token, "
            "cache_hit_share FROM slot_prefill WHERE task = 'map'",
        )
    }
    kg = [r for r in stored if r[0] == "kindergarten"]
    prompt, generated = sum(r[1] for r in kg), sum(r[3] for r in kg)
    assert prefill["kindergarten"] == (
        2,
        2,
        shared,
        round((prompt - shared) / generated, 3),
        round(shared / prompt, 4),
    )
    # The vLLM attempt said nothing: neither a hit nor a miss.
    assert prefill["naughty"] == (1, 0, None, None, None)
