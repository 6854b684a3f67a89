"""Helpers for the dataset recipe tests: a recipe of every column type, the slots of a test
(the simulator's file, fast retries) and running a recipe through ``run_recipe``."""

from __future__ import annotations

import copy
import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from model_foundry.lib import storage
from model_foundry.lib.events import SEMANTIC_SEARCH, InboxEvent, validate_message
from model_foundry.lib.inbox.store import write_batch
from model_foundry.lib.publish import make_event
from model_foundry.lib.recipes.generate import RUN_VERSION, RecipeOutcome, run_recipe
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.tables.summaries import SESSION_SUMMARIES, SummaryRow
from model_foundry_tests.slot_fixtures import Slots

QUESTIONS = ["how do I compact a DuckDB file", "what does a NATS pull consumer ack",
             "where does Dagster keep run logs", "why is my llama.cpp slot slow"]  # fmt: skip

EVERY_COLUMN: dict[str, Any] = {
    "name": "every_column",
    "seed": {"file": "seed.jsonl"},
    "random_seed": 3,
    "columns": [
        {"name": "query", "type": "seed"},
        {"name": "tone", "type": "sampler", "sampler": "category",
         "values": ["plain", "formal"], "weights": [3, 1]},
        {"name": "budget", "type": "sampler", "sampler": "uniform", "low": 50, "high": 200,
         "integer": True},
        {"name": "question", "type": "expression",
         "expr": "In a {{ tone }} tone: {{ query }}?"},
        {"name": "answer", "type": "llm_text", "role": "worker", "samples": 2,
         "system": "Answer briefly.", "prompt": "{{ question }}",
         "params": {"max_tokens": 64}},
        {"name": "facts", "type": "llm_structured", "role": "cheap",
         "prompt": "Topic and level of: {{ answer }}",
         "output_format": {"type": "object", "additionalProperties": False,
                           "required": ["topic", "level"],
                           "properties": {"topic": {"type": "string", "maxLength": 40},
                                          "level": {"type": "integer", "minimum": 1,
                                                    "maximum": 3}}}},
        {"name": "score", "type": "llm_judge",
         "prompt": "Q: {{ question }}\nA: {{ answer }}\nTopic: {{ facts.topic }}",
         "scores": [{"name": "helpful", "description": "Does it help?", "max": 5}]},
        {"name": "is_python", "type": "validation", "target": "answer", "python": True},
        {"name": "long_enough", "type": "validation", "target": "answer", "min_length": 5},
    ],
}  # fmt: skip


# Two roles answer each question and the judge compares the answers, in both orders.
PAIRWISE: dict[str, Any] = {
    "name": "pairwise",
    "seed": {"file": "seed.jsonl"},
    "columns": [
        {"name": "query", "type": "seed"},
        {"name": "answer", "type": "llm_text", "role": "worker", "prompt": "{{ query }}",
         "params": {"max_tokens": 64}},
        {"name": "cheap_answer", "type": "llm_text", "role": "cheap", "prompt": "{{ query }}",
         "params": {"max_tokens": 64}},
        {"name": "preference", "type": "llm_judge", "compare": ["answer", "cheap_answer"],
         "prompt": "Question: {{ query }}",
         "scores": [{"name": "helpful", "description": "Does it answer the question?",
                     "max": 10},
                    {"name": "clear", "description": "Is it easy to follow?"}]},
    ],
}  # fmt: skip


# An incremental SQL seed over the inbox: each run takes the searches past the last mark.
NEW_SEARCHES: dict[str, Any] = {
    "name": "new_searches",
    "seed": {
        "sql": f"SELECT payload ->> '$.query' AS query, commit_seq FROM pipeline_event_inbox "
        f"WHERE subject = '{SEMANTIC_SEARCH}'",
        "incremental": "commit_seq",
    },
    "columns": [
        {"name": "query", "type": "seed"},
        {"name": "answer", "type": "llm_text", "role": "cheap", "prompt": "{{ query }}",
         "params": {"max_tokens": 32}},
    ],
}  # fmt: skip

_SEQ = {"next": 1}


def land_searches(db: Path, queries: list[str]) -> None:
    """One inbox commit of semantic searches, through the inbox's own writer."""
    parsed = []
    for q in queries:
        event = make_event(SEMANTIC_SEARCH, {"query": q}, "session-1")
        parsed.append(validate_message(event.subject, event.body, _SEQ["next"], datetime.now(UTC)))
        _SEQ["next"] += 1
    assert all(isinstance(p, InboxEvent) for p in parsed)
    storage.run_in_transaction(db, lambda con: write_batch(con, "EVENTS", parsed, []))


def write_recipe(folder: Path, attributes: dict[str, Any], seeds: list[str] = QUESTIONS) -> Path:
    """A defs.yaml for ``attributes`` and a seed.jsonl of ``seeds`` beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "seed.jsonl").write_text(
        "".join(json.dumps({"query": q, "other": i}) + "\n" for i, q in enumerate(seeds)),
        encoding="utf-8",
    )
    path = folder / "defs.yaml"
    doc = {"type": "model_foundry.DatasetRecipe", "attributes": attributes}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def generate(folder: Path, attributes: dict[str, Any], db: Path, slots: Slots,
             version: str = RUN_VERSION, limit: int | None = None) -> RecipeOutcome:  # fmt: skip
    recipe = parse_recipe(copy.deepcopy(attributes), str(folder / "defs.yaml"))
    return run_recipe(recipe, db, slots, version=version, run_id="test", base_dir=folder,
                      log=logging.getLogger("recipe-test"), limit=limit)  # fmt: skip


def insert_searches(db: Path, queries: list[str]) -> None:
    """The lab's semantic searches, as ``search_questions`` reads them."""
    with storage.connect(db) as con:
        for i, query in enumerate(queries):
            con.execute(
                "INSERT INTO semantic_searches (event_id, correlation_id, occurred_at, query) "
                "VALUES (?, 's1', now(), ?)",
                [f"e{i}", query],
            )


def summary(session: str, text: str, *, language: str = "en", chat_events: int = 4,
            gate: str | None = None) -> SummaryRow:  # fmt: skip
    return SummaryRow(
        request_key=f"{session}-{chat_events}", correlation_id=session, chat_events=chat_events,
        event_ids="[]", first_event_at=None, last_event_at=None, language=language,
        summary=text, slot="kindergarten", model="m", prompt_tokens=None,
        completion_tokens=None, latency_s=None, gen_tps=None, run_id=None, gate=gate,
    )  # fmt: skip


def insert_summaries(db: Path, rows: list[SummaryRow]) -> None:
    """Session summaries, as ``summary_round_trip`` reads them."""
    with storage.connect(db) as con:
        for row in rows:
            con.execute(SESSION_SUMMARIES.insert_sql(), SESSION_SUMMARIES.values(row))
