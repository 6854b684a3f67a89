"""Session trajectories: a session's inbox events as conversations a lab can train on.

- ``turns``: one turn in OpenAI's chat shape, read from whatever a publisher sent.
- ``state``: what a thread remembers between runs (identities, calls, tools, lineage).
- ``builder``: events -> new turns per thread, both persistence styles, tool-event matching.
- ``calls``: tools schemas, tool turns tied to their calls, turns a tool event already made.
- ``records``: a thread's turns -> its trajectory record(s), long threads in parts.
- ``sessions``, ``export``: finished sessions read back as records and exported as a dataset.
"""

from model_foundry.lib.trajectories.builder import (
    MAIN_THREAD,
    NewTurn,
    SessionBuilder,
    SessionEvent,
    build_sessions,
)
from model_foundry.lib.trajectories.records import trajectory_records
from model_foundry.lib.trajectories.state import ThreadState
from model_foundry.lib.trajectories.turns import ToolCall, Turn

__all__ = [
    "MAIN_THREAD",
    "NewTurn",
    "SessionBuilder",
    "SessionEvent",
    "ThreadState",
    "ToolCall",
    "Turn",
    "build_sessions",
    "trajectory_records",
]
