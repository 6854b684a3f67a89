"""The dataset's chat session prompts are read by the dataset's own commit position: a
second read after the position advanced sees only the sessions that began since, a version
that did not finish reads its sessions again, and nothing past the typed tables is read.
Real DuckDB files filled with bench downstream's mix (300 events a session)."""

from __future__ import annotations

from pathlib import Path

from model_foundry.devtools.bench.downstream import fill_mix
from model_foundry.lib.datasets.prompts import advance_chat_prompts, read_chat_session_prompts
from model_foundry.lib.inbox.typed import refresh_inbox_tables

OPENING = "Summarise the tool calls from the last coding session {}"


def sessions(db: Path, limit: int = 50, dataset: str = "lab") -> dict[str, str]:
    read = read_chat_session_prompts(db, limit, dataset)
    return {p.prompt_id: p.messages[0]["content"] for p in read.prompts}


def test_a_second_read_sees_only_the_sessions_that_began_since(tmp_path: Path) -> None:
    db = tmp_path / "inbox.duckdb"
    fill_mix(db, 0, 900)
    # Nothing is read before the typed tables hold it.
    assert sessions(db) == {}
    refresh_inbox_tables(db)
    first = read_chat_session_prompts(db, 50, "lab")
    assert {p.prompt_id: p.messages[0]["content"] for p in first.prompts} == {
        f"chat:bench-{n}": OPENING.format(n * 300) for n in range(3)
    }
    # Not advanced (the version did not finish): the same sessions again.
    assert sessions(db) == {f"chat:bench-{n}": OPENING.format(n * 300) for n in range(3)}
    advance_chat_prompts(db, first.span)
    assert sessions(db) == {}

    # bench-2 gets more events (850..899 again, new ids) and bench-3 and bench-4 begin.
    fill_mix(db, 850, 1500)
    refresh_inbox_tables(db)
    assert sessions(db) == {
        "chat:bench-3": OPENING.format(900),
        "chat:bench-4": OPENING.format(1200),
    }
    # Another dataset has a position of its own and reads every session.
    assert len(sessions(db, dataset="other")) == 5


def test_a_limit_leaves_the_later_sessions_for_the_next_version(tmp_path: Path) -> None:
    db = tmp_path / "inbox.duckdb"
    for low in range(0, 1500, 300):  # one commit a session
        fill_mix(db, low, low + 300)
    refresh_inbox_tables(db)
    first = read_chat_session_prompts(db, 2, "lab")
    assert [p.prompt_id for p in first.prompts] == ["chat:bench-0", "chat:bench-1"]
    advance_chat_prompts(db, first.span)
    second = read_chat_session_prompts(db, 2, "lab")
    assert [p.prompt_id for p in second.prompts] == ["chat:bench-2", "chat:bench-3"]
    advance_chat_prompts(db, second.span)
    assert sessions(db, 2) == {"chat:bench-4": OPENING.format(1200)}
