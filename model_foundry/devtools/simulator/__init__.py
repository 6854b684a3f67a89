"""Slot simulator: a DEV AND TEST TOOL standing in for GPU model servers. Not a model.

``model-foundry simulate-slots`` serves every slot of a slot file as an OpenAI-compatible
server over real HTTP (see ``answers.py`` for what it answers, ``tokenizer.py`` for how it
counts, ``slot.py`` for one slot's routes, ``queue.py`` for its parallel accounting,
``generation.py`` and ``respond.py`` for answering, ``server.py`` for the process that serves
them all).
"""

from model_foundry.devtools.simulator.answers import (
    CONTEXT_MARKER,
    DEFAULT_LATENCY,
    Faults,
    LatencyModel,
    SimAnswer,
    answer_chat,
    answer_completion,
    count_tokens,
    default_window,
    echo_text,
    error_body,
    translate_text,
)
from model_foundry.devtools.simulator.server import SlotSimulator, run, serve
from model_foundry.devtools.simulator.slot import SimSlot, SlotStats

__all__ = [
    "CONTEXT_MARKER",
    "DEFAULT_LATENCY",
    "Faults",
    "LatencyModel",
    "SimAnswer",
    "SimSlot",
    "SlotSimulator",
    "SlotStats",
    "answer_chat",
    "answer_completion",
    "count_tokens",
    "default_window",
    "echo_text",
    "error_body",
    "run",
    "serve",
    "translate_text",
]
