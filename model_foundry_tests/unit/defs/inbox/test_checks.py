"""The inbox checks on real DuckDB files: a fresh file passes without anyone creating its
tables first, and a stored duplicate, a sessionless event or a dead-letter-heavy subject fail."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from model_foundry.defs.inbox.checks import (
    DeadLetterShareConfig,
    inbox_correlation_ids_present,
    inbox_dead_letter_share,
    inbox_event_ids_unique,
)
from model_foundry.defs.resources import FoundryDuckDB
from model_foundry.lib import storage


def run_checks(db_path: Path, max_share: float = 0.5) -> dict[str, dg.AssetCheckResult]:
    duckdb = FoundryDuckDB(database=str(db_path))
    return {
        "unique": inbox_event_ids_unique(duckdb=duckdb),
        "correlation": inbox_correlation_ids_present(duckdb=duckdb),
        "dead": inbox_dead_letter_share(
            config=DeadLetterShareConfig(max_share=max_share), duckdb=duckdb
        ),
    }


def test_a_fresh_file_passes_every_check(db_path: Path) -> None:
    results = run_checks(db_path)
    assert all(r.passed for r in results.values())
    assert results["unique"].metadata["rows"].value == 0


def test_duplicates_missing_sessions_and_many_dead_letters_fail(db_path: Path) -> None:
    with storage.connect(db_path) as con:
        con.execute(
            "INSERT INTO pipeline_event_inbox (event_id, subject, source_subject, "
            "correlation_id, occurred_at, received_at, stream_seq, payload, body_sha256, "
            "commit_seq) "
            "SELECT id, 'llm.tool_call', 'llm.tool_call', sess, now(), now(), seq, '{}', 'h', 1 "
            "FROM (VALUES ('a', 's', 1), ('a', 's', 2), ('b', ' ', 3)) v(id, sess, seq)"
        )
        con.execute(
            "INSERT INTO pipeline_event_dead_letter (stream, stream_seq, subject, "
            "source_subject, reason, raw, raw_bytes, received_at) "
            "SELECT 'S', i, 'llm.chat.persist', 'llm.chat.persist', 'bad', 'x', 1, now() "
            "FROM range(4) r(i)"
        )
    results = run_checks(db_path)
    assert not results["unique"].passed
    assert results["unique"].metadata["duplicate_rows"].value == 1
    assert not results["correlation"].passed
    assert results["correlation"].metadata["missing"].value == 1
    dead = results["dead"]
    assert not dead.passed
    assert dead.metadata["shares"].value == {"llm.chat.persist": 1.0, "llm.tool_call": 0.0}
