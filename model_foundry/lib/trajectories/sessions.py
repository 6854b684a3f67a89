"""Reading finished session threads from DuckDB as trajectory records.

A session is finished for export once its last event (``occurred_at``) is older than the
idle time (``MODEL_FOUNDRY_SESSION_IDLE_MINUTES``, default 30); ``include_active`` takes
running ones too. ``since``/``until`` keep sessions whose events fall in that window (last
event at or after ``since``, first before ``until``). Records are read session by session,
so memory follows the largest batch of sessions, not the export.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.tables.trajectories import SESSION_TURNS
from model_foundry.lib.trajectories.records import DEFAULT_MAX_TURNS, trajectory_records
from model_foundry.lib.trajectories.state import ThreadState
from model_foundry.lib.trajectories.store import stored_turn
from model_foundry.lib.trajectories.turns import Turn

DEFAULT_IDLE = timedelta(minutes=30)
_BATCH_SESSIONS = 500


@dataclass(frozen=True)
class SessionWindow:
    """Which sessions an export takes."""

    idle: timedelta = DEFAULT_IDLE
    include_active: bool = False
    since: datetime | None = None
    until: datetime | None = None
    now: datetime | None = None


_SESSIONS = """
SELECT correlation_id FROM session_trajectories
GROUP BY correlation_id
HAVING (? OR max(last_at) < ?)
   AND (?::TIMESTAMPTZ IS NULL OR max(last_at) >= ?::TIMESTAMPTZ)
   AND (?::TIMESTAMPTZ IS NULL OR min(first_at) < ?::TIMESTAMPTZ)
ORDER BY correlation_id
"""


def export_sessions(con: duckdb.DuckDBPyConnection, window: SessionWindow) -> list[str]:
    now = window.now or datetime.now(UTC)
    rows = con.execute(
        _SESSIONS,
        [
            window.include_active,
            now - window.idle,
            window.since,
            window.since,
            window.until,
            window.until,
        ],
    ).fetchall()
    return [r[0] for r in rows]


# A batch is a run of the sorted session ids: the range (a filter DuckDB applies in its
# scan, reading the other columns only of rows inside it) comes before the exact list (a
# semi-join, which alone reads every column of every row: each batch would cost as much as
# the whole table, and an export would grow with the square of its sessions).
_IN_BATCH = "correlation_id BETWEEN ? AND ? AND correlation_id IN (SELECT unnest(?::VARCHAR[]))"
_STATES = f"""
SELECT state::VARCHAR FROM session_trajectories
WHERE {_IN_BATCH}
"""

# session_turns' rows, tool_calls as the JSON text its row type holds.
_TURNS = f"""
SELECT correlation_id, thread, turn_index, role, content, reasoning,
       tool_calls::VARCHAR AS tool_calls, tool_call_id, name, slot, model, event_id,
       occurred_at, finish_reason, tool_error, origin
FROM session_turns WHERE {_IN_BATCH}
ORDER BY correlation_id, thread, turn_index
"""


def session_records(
    db_path: str | Path, sessions: list[str], max_turns: int = DEFAULT_MAX_TURNS
) -> Iterator[dict[str, Any]]:
    """The trajectory records of ``sessions``, thread by thread, in a stable order. Each batch
    of sessions is read on a connection of its own, so a long export never holds the file
    while other writers wait."""
    ordered = sorted(sessions)
    del sessions  # the caller's list goes once the caller lets go of it too
    for start in range(0, len(ordered), _BATCH_SESSIONS):
        batch = ordered[start : start + _BATCH_SESSIONS]
        within = [batch[0], batch[-1], batch]
        with storage.connect(db_path) as con:
            states = {
                (s.correlation_id, s.thread): s
                for s in (
                    ThreadState.from_json(r[0]) for r in con.execute(_STATES, within).fetchall()
                )
            }
            stored = SESSION_TURNS.rows(con, _TURNS, within)
        turns: dict[tuple[str, str], list[Turn]] = {}
        for row in stored:
            turns.setdefault((row.correlation_id, row.thread), []).append(stored_turn(row))
        del stored
        for key in sorted(turns):
            yield from trajectory_records(states[key], turns[key], max_turns)


__all__ = ["DEFAULT_IDLE", "SessionWindow", "export_sessions", "session_records"]
