"""The fixed, seeded workload of ``bench prefill`` and its three steps, each through the
pipeline's own work (``LlmRun``): samples, map/reduce summaries and pairwise judging.

- ``fanout``: every prompt asked of two roles, ``samples`` times each (``dataset collect``'s
  built-in recipe, ``lib/recipes/collect.py``);
- ``mapreduce``: sessions longer than one request's context, summarised in parts and reduced
  (``summarise_sessions``);
- ``judge``: for each judged prompt, every two of three answers compared, in both orders
  (the collection's judge recipe, ``lib/recipes/collect_judge.py``). The answers are seeded
  text, not the fan-out's, so both runs judge the same requests whatever the model wrote in
  the fan-out.

Text is drawn from a small vocabulary by ``random.Random(seed)``: the same seed, the same
requests, byte for byte. Answers are cut at ``max_tokens`` (``ignore_eos``), so both runs
generate the same number of tokens outside the judge step, whose grammar ends each verdict.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_foundry.lib.datasets.prompts import PromptRecord
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.llm import LlmRun, SlotSource
from model_foundry.lib.recipes.collect import collect
from model_foundry.lib.recipes.judged import judge as judge_version
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.summaries.mapreduce import summarise_sessions
from model_foundry.lib.summaries.pending import SessionToSummarise
from model_foundry.lib.summaries.prompts import ChatLine
from model_foundry.lib.tables.datasets import DatasetSampleRow

_VOCABULARY = (
    "writer table column index commit batch slot queue lease token prompt answer session "
    "summary judge sample server cache prefix window chunk reduce export split cluster "
    "secret scrub gate parquet manifest sensor schedule daemon stream consumer subject "
    "event record retry backoff cooldown timeout metric gauge counter panel alert"
)
WORDS = tuple(_VOCABULARY.split(" "))
FANOUT_ROLES = ("worker", "cheap")
SUMMARY_ROLE = "summary"
DATASET = "bench-prefill"


@dataclass(frozen=True)
class Workload:
    """How much of each step: small enough for a few minutes on two CPU cores."""

    seed: int = 30
    prompts: int = 6
    samples: int = 4
    prompt_words: int = 260
    sessions: int = 2
    session_lines: int = 60
    judged_prompts: int = 4
    answer_words: int = 40


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def prompts(w: Workload) -> list[PromptRecord]:
    """Long prompts: a document to read, then a short question about it."""
    rng = random.Random(w.seed)
    out = []
    for i in range(w.prompts):
        document = _text(rng, w.prompt_words)
        question = f"Which three words of the notes above matter most for step {i}, and why?"
        messages = [
            {"role": "system", "content": "You answer questions about the operator's notes."},
            {"role": "user", "content": f"Notes:\n{document}\n\n{question}"},
        ]
        out.append(PromptRecord(f"bench-{w.seed}-{i}", "bench", messages))
    return out


def sessions(w: Workload) -> list[SessionToSummarise]:
    rng = random.Random(w.seed + 1)
    out = []
    for s in range(w.sessions):
        lines = [
            ChatLine("user" if i % 2 == 0 else "assistant", f"step {i}: {_text(rng, 24)}")
            for i in range(w.session_lines)
        ]
        out.append(SessionToSummarise(f"bench-session-{s}", len(lines), [], None, None, lines))
    return out


def judged_samples(w: Workload) -> list[DatasetSampleRow]:
    """Three answers of two roles to each judged prompt, stored as the fan-out would."""
    rng = random.Random(w.seed + 2)
    rows = []
    for p in prompts(w)[: w.judged_prompts]:
        for n, role in enumerate(("worker", "worker", "cheap")):
            response = _text(rng, w.answer_words)
            rows.append(
                DatasetSampleRow(
                    dataset=DATASET, version="judged", request_key=f"{p.prompt_id}-{n}",
                    prompt_id=p.prompt_id, source="bench", role=role, sample_index=n,
                    messages=json.dumps(p.messages), prompt=p.prompt_text,
                    response=response, reasoning=None, slot=role, model="bench",
                    params="{}", prompt_tokens=None, completion_tokens=None,
                    finish_reason="stop", is_empty=False, is_truncated=False, run_id=None,
                )
            )  # fmt: skip
    return rows


@dataclass
class StepResult:
    name: str
    attempts: list[Attempt]
    seconds: float
    places: int  # the places of the slots the step's work went to
    # The step's share of the fewest prompt tokens any order could have computed, and its
    # prompts as tokenized for it (``prefill_floor.run_floor``); None until measured.
    floor: int | None = None
    tokenized: int | None = None

    def figures(self) -> dict[str, Any]:
        prompt = sum(a.prompt_tokens or 0 for a in self.attempts)
        cached = sum(a.cached_prompt_tokens or 0 for a in self.attempts)
        generated = sum(a.completion_tokens or 0 for a in self.attempts)
        busy = sum(a.latency_s or 0.0 for a in self.attempts)
        return {
            "step": self.name,
            "requests": len(self.attempts),
            "errors": sum(not a.ok for a in self.attempts),
            # Of the errors, those asked again (a request that finally failed is the rest).
            "retried": sum(a.will_retry for a in self.attempts),
            "prompt_tokens": prompt,
            "prefill_tokens_computed": prompt - cached,
            "prefill_floor_tokens": self.floor,
            "prompt_tokens_tokenized": self.tokenized,
            "generated_tokens": generated,
            "generated_tps": round(generated / self.seconds, 2) if self.seconds else None,
            "wall_s": round(self.seconds, 2),
            "slot_fill_ratio": round(busy / (self.places * self.seconds), 3)
            if self.seconds and self.places
            else None,
        }


def _attempts(run: LlmRun) -> list[Attempt]:
    return [a for b in run.batches if b.dispatch is not None for a in b.dispatch.attempts]


def _timed(
    name: str, source: SlotSource, db: Path, places: int, work: Callable[[LlmRun], object]
) -> StepResult:
    log = logging.getLogger("model_foundry.bench.prefill")
    with LlmRun(db, source, run_id=None, asset=f"bench-prefill-{name}", log=log) as run:
        started = time.monotonic()
        work(run)
        seconds = time.monotonic() - started
        return StepResult(name, _attempts(run), seconds, places)


def steps(
    w: Workload, source: SlotSource, judge: SlotSource, db: Path, places: dict[str, int]
) -> Iterator[StepResult]:
    """The three steps, one after another, on ``db`` (a fresh file for each run)."""

    def fanout(run: LlmRun) -> object:
        return collect(run, DATASET, "fanout", prompts(w), FANOUT_ROLES, w.samples, {})

    yield _timed("fanout", source, db, places["fanout"], fanout)

    def summarise(run: LlmRun) -> object:
        return summarise_sessions(
            run, sessions(w), role=SUMMARY_ROLE, max_messages=1000, max_chars=400
        )

    yield _timed("mapreduce", source, db, places["mapreduce"], summarise)
    write_samples(db, judged_samples(w))
    # Families off (the baseline), each order goes where a place is free; on, a comparison's
    # two orders go to one slot, whose cache holds what they share.
    yield _timed("judge", judge, db, places["judge"],
                 lambda run: judge_version(run, DATASET, "judged", "grandpa"))  # fmt: skip


__all__ = ["FANOUT_ROLES", "SUMMARY_ROLE", "StepResult", "Workload", "steps"]
