"""What each kind of dataset record looks like in every view of an export.

A :class:`Layout` names the Hugging Face config, gives the Arrow schema its ``hf/`` Parquet
files are written with (one fixed schema for every file, so no loader infers a type from the
first rows or fills missing keys with None) and turns a record into a line of OpenAI's
fine-tuning chat format. Tool-call ``arguments`` and the ``tools`` schema are JSON text in
every view: their keys and value types differ from call to call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

_TOOL_CALL = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)
MESSAGE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("reasoning", pa.string()),
        ("tool_calls", pa.list_(_TOOL_CALL)),
        ("tool_call_id", pa.string()),
        ("name", pa.string()),
        ("slot", pa.string()),
        ("model", pa.string()),
    ]
)
_STRINGS = pa.list_(pa.string())

# A record's best match against the eval sets (``lib/decontamination``; null: none): only
# samples.parquet holds it, beside ``kept`` and ``dropped_by``.
CONTAMINATION = pa.struct(
    [
        ("eval_set", pa.string()),
        ("item_id", pa.string()),
        ("score", pa.float64()),
        ("span", pa.string()),
    ]
)

# Columns every record has after hygiene: its group and split.
HYGIENE_FIELDS = [("cluster_id", pa.string()), ("split", pa.string())]


def openai_message(m: dict[str, Any]) -> dict[str, Any]:
    """A message with only the keys OpenAI's fine-tuning format accepts (no reasoning)."""
    out: dict[str, Any] = {"role": m["role"], "content": m.get("content")}
    if m["role"] == "assistant" and m.get("tool_calls"):
        out["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": dict(c["function"])}
            for c in m["tool_calls"]
        ]
    elif m["role"] == "tool":
        out["tool_call_id"] = m.get("tool_call_id")
        out["content"] = m.get("content") or ""
    if out["content"] is None and m["role"] != "assistant":
        out["content"] = ""
    return out


def session_openai(record: dict[str, Any]) -> dict[str, Any]:
    line: dict[str, Any] = {"messages": [openai_message(m) for m in record["messages"]]}
    tools = json.loads(record.get("tools") or "[]")
    if tools:
        line["tools"] = tools
    return line


def sample_openai(record: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [openai_message(m) for m in record["messages"]]}


@dataclass(frozen=True)
class Layout:
    """One kind of record: its config name, ``hf/`` schema and OpenAI line, and what the card
    calls the records (``title``) and the groups their splits are drawn by (``group``)."""

    config: str
    schema: pa.Schema
    openai: Callable[[dict[str, Any]], dict[str, Any]]
    task_categories: tuple[str, ...]
    tags: tuple[str, ...]
    # Columns only samples.parquet holds (why a record was held back), not the other views.
    audit: tuple[tuple[str, pa.DataType], ...] = ()
    title: str = "Records"
    group: str = "session"

    @property
    def spooled(self) -> pa.Schema:
        """The schema with the audit columns: what hygiene spools and samples.parquet holds."""
        return pa.schema([*self.schema, *[pa.field(n, t) for n, t in self.audit]])


SESSIONS = Layout(
    config="sessions",
    schema=pa.schema(
        [
            ("id", pa.string()),
            ("correlation_id", pa.string()),
            ("thread", pa.string()),
            ("part", pa.int32()),
            ("messages", pa.list_(MESSAGE)),
            ("tools", pa.string()),
            ("models", _STRINGS),
            ("slots", _STRINGS),
            ("event_ids", _STRINGS),
            ("first_at", pa.string()),
            ("last_at", pa.string()),
            ("turns", pa.int32()),
            ("empty_turns", pa.int32()),
            ("truncated_turns", pa.int32()),
            ("tool_errors", pa.int32()),
            *HYGIENE_FIELDS,
        ]
    ),
    openai=session_openai,
    task_categories=("text-generation",),
    tags=("agent", "tool-use", "chat", "trajectories", "model-foundry"),
    title="Agent session trajectories",
)

SAMPLES = Layout(
    config="samples",
    schema=pa.schema(
        [
            ("id", pa.string()),
            ("dataset", pa.string()),
            ("version", pa.string()),
            ("request_key", pa.string()),
            ("prompt_id", pa.string()),
            ("source", pa.string()),
            ("role", pa.string()),
            ("sample_index", pa.int32()),
            ("messages", pa.list_(MESSAGE)),
            ("prompt", pa.string()),
            ("response", pa.string()),
            ("reasoning", pa.string()),
            ("slot", pa.string()),
            ("model", pa.string()),
            ("params", pa.string()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("finish_reason", pa.string()),
            ("is_empty", pa.bool_()),
            ("is_truncated", pa.bool_()),
            ("created_at", pa.string()),
            *HYGIENE_FIELDS,
        ]
    ),
    openai=sample_openai,
    task_categories=("text-generation",),
    tags=("chat", "synthetic", "model-foundry"),
    audit=(("gate", pa.string()),),
    title="Prompt fan-out samples",
    group="prompt",
)

_TURN = pa.struct([("role", pa.string()), ("content", pa.string())])


def preference_openai(record: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's preference fine-tuning line: the input messages, the preferred answer and
    the other one."""
    return {
        "input": {"messages": record["prompt"]},
        "preferred_output": record["chosen"],
        "non_preferred_output": record["rejected"],
    }


# TRL's conversational preference format, with the judge's scores and who wrote what.
PREFERENCE = Layout(
    config="preference",
    schema=pa.schema(
        [
            ("id", pa.string()),
            ("prompt_id", pa.string()),
            ("language", pa.string()),
            ("prompt", pa.list_(_TURN)),
            ("chosen", pa.list_(_TURN)),
            ("rejected", pa.list_(_TURN)),
            ("score_chosen", pa.float64()),
            ("score_rejected", pa.float64()),
            ("model_chosen", pa.string()),
            ("model_rejected", pa.string()),
            ("judge_model", pa.string()),
            ("split", pa.string()),
        ]
    ),
    openai=preference_openai,
    task_categories=("text-generation",),
    tags=("preference", "dpo", "llm-as-judge", "model-foundry"),
)

__all__ = [
    "CONTAMINATION",
    "MESSAGE",
    "PREFERENCE",
    "SAMPLES",
    "SESSIONS",
    "Layout",
    "openai_message",
]
