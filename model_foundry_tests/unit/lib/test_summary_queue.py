"""The summary queue: filled by the typed-table step with the chat messages, emptied with the:
the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib.inbox.typed import refresh_inbox_tables
from model_foundry.lib.summaries.pending import sessions_to_summarise
from model_foundry_tests.shared.lib.summary_queue import (
    TWO_SESSIONS,
    queued,
)

pytestmark = pytest.mark.timeout(300)

# fill_mix puts 300 events in a session: events 280..320 are the end of bench-0 and the
# start of bench-1, 12 chat events of 20.


def test_the_typed_table_step_queues_sessions_with_their_new_chat(db_path: Path) -> None:
    fill_mix(db_path, *TWO_SESSIONS)
    refresh_inbox_tables(db_path)
    assert queued(db_path) == ["bench-0", "bench-1"]
    pending = sessions_to_summarise(db_path, 10)
    assert [(s.correlation_id, s.chat_events) for s in pending] == [
        ("bench-0", 12),
        ("bench-1", 12),
    ]
    assert all(len(s.lines) == 3 * s.chat_events for s in pending)
    assert sessions_to_summarise(db_path, 1)[0].correlation_id == "bench-0"
