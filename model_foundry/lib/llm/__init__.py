"""Asking the slots, written once for every LLM asset.

- ``request``: the one typed :class:`Request` (its :class:`Body` comes from ``lib/slots``),
  planned (keyed) and fitted to context windows.
- ``store``: ``llm_completions``, every attempt, and the answers earlier runs already have.
- ``answer``: a round of planned requests answered from the store or through the dispatcher.
- ``batch``: what a round did, its failure causes and figures (plain metadata).
- ``causes``: one sentence per way a request fails, counted.
- ``run``: :class:`LlmRun`, the pipeline an asset calls, and :class:`WorkKind`, the shape
  of a kind of work with one request per item and one row per answer.
"""

from model_foundry.lib.llm.batch import CompletionBatch
from model_foundry.lib.llm.causes import cause_lines, failure_cause, failure_causes
from model_foundry.lib.llm.request import Body, Planned, Request
from model_foundry.lib.llm.run import (
    Answer,
    LlmRun,
    SlotSource,
    WorkKind,
    WorkOutcome,
    answer_event,
    nothing_asked,
)
from model_foundry.lib.llm.store import Completion, CompletionStore

__all__ = [
    "Answer",
    "Body",
    "Completion",
    "CompletionBatch",
    "CompletionStore",
    "LlmRun",
    "Planned",
    "Request",
    "SlotSource",
    "WorkKind",
    "WorkOutcome",
    "answer_event",
    "cause_lines",
    "failure_cause",
    "failure_causes",
    "nothing_asked",
]
