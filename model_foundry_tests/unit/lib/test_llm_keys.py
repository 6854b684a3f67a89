"""The LLM tables without a key: a file written with their keys moves once and keeps every
row; after the move an answered request is still reused and never asked again, and a
summary, a translation or a sample already stored is refused. Real DuckDB files."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from model_foundry.devtools.bench.keys import ADDED_COLUMNS, OLD_INDEX, keyed_ddl
from model_foundry.lib import storage
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.llm import Body, Completion, CompletionStore, Planned, Request
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.summaries.mapreduce import PartRecord, Summarised
from model_foundry.lib.summaries.pending import SessionToSummarise
from model_foundry.lib.summaries.rows import store_summaries, summary_row, write_summaries
from model_foundry.lib.summaries.translations import write_translations
from model_foundry.lib.tables import registry
from model_foundry.lib.tables.base import Table
from model_foundry.lib.tables.completions import LLM_COMPLETIONS, CompletionRow, key_prefix
from model_foundry.lib.tables.datasets import DATASET_SAMPLES, DatasetSampleRow
from model_foundry.lib.tables.summaries import (
    SESSION_SUMMARIES,
    SESSION_SUMMARY_PARTS,
    SESSION_SUMMARY_TRANSLATIONS,
    SummaryPartRow,
    SummaryRow,
    TranslationRow,
)

# Each table's key in the layout before this one.
OLD_KEYS: dict[Table, str] = {
    LLM_COMPLETIONS: "attempt_id",
    SESSION_SUMMARIES: "request_key",
    SESSION_SUMMARY_TRANSLATIONS: "summary_key",
    SESSION_SUMMARY_PARTS: "summary_key, level, part_index",
    DATASET_SAMPLES: "dataset, version, request_key",
}
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
# A request key as the store makes them: a sha256 in hex (the others are not).
HEX_KEY = hashlib.sha256(b"a request").hexdigest()


def as_arrow(table: Table, rows: list) -> pa.Table:
    """``rows`` as an Arrow table of ``table``'s insert columns, to shape a file of an older
    layout (drop or rename columns) before it is inserted."""
    columns = {}
    for f in table.arrow_schema:
        values = [getattr(r, f.name) for r in rows]
        typed = not pa.types.is_null(f.type)
        columns[f.name] = pa.array(values, f.type) if typed else pa.array(values)
    return pa.table(columns)


def attempt_row(key: str, n: int, status: str, content: str | None) -> CompletionRow:
    return CompletionRow(
        f"attempt-{key}-{n}", key, "task", "role", "slot", "model", "simulator", status, n,
        False, None if status == "ok" else "HTTPError", None, None, 10, 5, 0.5, 0.1, 100.0,
        20.0, "stop", content, None, "model", "{}", "{}", "run-old", WHEN,
    )  # fmt: skip


def summary(key: str, session: str, chat_events: int) -> SummaryRow:
    return SummaryRow(
        key, session, chat_events, json.dumps([f"e{i}" for i in range(chat_events)]), WHEN,
        WHEN, "en", f"summary {key}", "slot", "model", 10, 5, 0.5, 20.0, "run-old",
    )  # fmt: skip


def translation(summary_key: str, session: str) -> TranslationRow:
    return TranslationRow(
        summary_key, session, f"t-{summary_key}", "en", "ja", f"summary {summary_key}",
        f"翻訳 {summary_key}", "translator", "model", 10, 5, 0.5, 20.0, "run-old",
    )  # fmt: skip


def sample(version: str, key: str) -> DatasetSampleRow:
    return DatasetSampleRow(
        "lab", version, key, f"p-{key}", "prompts.jsonl", "role", 0, "[]", "a prompt",
        f"answer {key}", None, "slot", "model", "{}", 10, 5, "stop", False, False, "run-old",
    )  # fmt: skip


OLD_ROWS: dict[Table, list] = {
    LLM_COMPLETIONS: [
        attempt_row("k-ok", 1, "ok", "first answer"),
        attempt_row("k-ok", 2, "ok", "second answer"),
        attempt_row("k-blank", 1, "ok", "  \n"),
        attempt_row("k-failed", 1, "error", None),
        attempt_row(HEX_KEY, 1, "ok", "hex answer"),
    ],
    SESSION_SUMMARIES: [summary("s-1", "session-a", 3), summary("s-2", "session-b", 4)],
    SESSION_SUMMARY_TRANSLATIONS: [translation("s-1", "session-a")],
    SESSION_SUMMARY_PARTS: [SummaryPartRow("s-2", "session-b", 1, 0, "p-0", 1, 2)],
    DATASET_SAMPLES: [sample("v1", "q-1"), sample("v1", "q-2")],
}


@pytest.fixture
def migrated(tmp_path: Path) -> Path:
    """A file of the keyed layout with rows in each table, opened once by the product."""
    db = tmp_path / "keyed.duckdb"
    with duckdb.connect(str(db)) as con:
        for table, key in OLD_KEYS.items():
            con.execute(keyed_ddl(table, key))
            for row in OLD_ROWS[table]:  # one transaction each: created_at in row order
                old = as_arrow(table, [row])
                added = [c for c in ADDED_COLUMNS if c in old.column_names]
                con.register("old_row", old.drop_columns(added))
                con.execute(f"INSERT INTO {table.name} BY NAME SELECT * FROM old_row")
                con.unregister("old_row")
        con.execute(OLD_INDEX)
    with storage.connect(db):
        pass
    return db


def stored(db: Path, table: Table) -> list:
    with duckdb.connect(str(db), read_only=True) as con:
        return table.rows(con, table.select_sql() + f" ORDER BY {OLD_KEYS[table]}")


def test_the_move_keeps_every_row_and_leaves_no_key_or_index(migrated: Path) -> None:
    with duckdb.connect(str(migrated), read_only=True) as con:
        keys = con.execute(
            "SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
        ).fetchall()
        indexes = con.execute("SELECT index_name FROM duckdb_indexes()").fetchall()
    assert not {t.name for t in OLD_KEYS} & {k for (k,) in keys}
    assert indexes == []
    for table, rows in OLD_ROWS.items():
        # created_at / recorded_at came with the rows: only the columns written are compared.
        kept = [written(table, r) for r in stored(migrated, table)]
        assert sorted(kept, key=str) == sorted((written(table, r) for r in rows), key=str)
    # The moved attempts got the prefix the store writes for new ones.
    moved = stored(migrated, LLM_COMPLETIONS)
    assert [r.key_prefix for r in moved] == [key_prefix(r.request_key) for r in moved]


def written(table: Table, row: object) -> dict:
    """What the old layout held of ``row``: its written columns, less those added since."""
    return {c: getattr(row, c) for c in table.insert_columns if c not in ADDED_COLUMNS}


def planned(key: str) -> Planned:
    request = Request("task", "role", Body(prompt=f"prompt of {key}"))
    return Planned(request, key, "model", {}, "slot")


def test_an_answered_request_is_still_reused_after_the_move(migrated: Path) -> None:
    store = CompletionStore(migrated, run_id="run-new")
    keys = ["k-ok", "k-blank", "k-failed", "k-never", HEX_KEY]
    found = store.finished(keys)
    # The newest answer; a blank one and a failed one are asked again.
    assert {k: c.content for k, c in found.items()} == {
        "k-ok": "second answer",
        HEX_KEY: "hex answer",
    }
    assert found["k-ok"].reused

    store.record(
        Attempt("k-failed", "task", "role", "slot", "model", "simulator", "ok", attempt=2,
                content="now answered"),
        planned("k-failed"),
    )  # fmt: skip
    again = store.finished(keys)
    assert {k: c.content for k, c in again.items()} == {
        "k-ok": "second answer",
        "k-failed": "now answered",
        HEX_KEY: "hex answer",
    }
    assert len(stored(migrated, LLM_COMPLETIONS)) == len(OLD_ROWS[LLM_COMPLETIONS]) + 1


def summarised(row: SummaryRow, parts: int = 0) -> Summarised:
    session = SessionToSummarise(
        row.correlation_id, row.chat_events, json.loads(row.event_ids), WHEN, WHEN, [],
        queued_commit=0, queued_at=datetime.now(UTC),
    )  # fmt: skip
    completion = Completion(row.request_key, row.summary, None, "slot", "model", 10, 5, 0.5,
                            20.0, "stop")  # fmt: skip
    records = [PartRecord(1, i, f"{row.request_key}-part-{i}", i + 1, i + 1) for i in range(parts)]
    return Summarised(session, planned(row.request_key), completion, "en", records)


def store(db: Path, rows: list[SummaryRow], parts: int = 0) -> int:
    done = [summarised(r, parts) for r in rows]
    made = [summary_row(d, "run-new") for d in done]
    return len(store_summaries(db, [r for r in made if r is not None], done))


def test_a_stored_summary_is_refused_and_a_new_one_stored_once_with_its_parts(
    migrated: Path,
) -> None:
    assert store(migrated, [summary("s-2", "session-b", 4)], parts=2) == 0
    assert store(migrated, [summary("s-3", "session-b", 6)], parts=2) == 1
    assert store(migrated, [summary("s-3", "session-b", 6)], parts=2) == 0
    # The same transcript in another session is that session's own summary.
    assert store(migrated, [summary("s-3", "session-c", 6)]) == 1
    kept = [(r.request_key, r.correlation_id) for r in stored(migrated, SESSION_SUMMARIES)]
    assert sorted(kept) == [
        ("s-1", "session-a"),
        ("s-2", "session-b"),
        ("s-3", "session-b"),
        ("s-3", "session-c"),
    ]
    parts = [(p.summary_key, p.part_index) for p in stored(migrated, SESSION_SUMMARY_PARTS)]
    assert parts == [("s-2", 0), ("s-3", 0), ("s-3", 1)]


def test_a_translation_is_stored_once_while_its_summary_waits(migrated: Path) -> None:
    # The move seeded the queue with the summary no translation covered: s-2.
    assert write_translations(migrated, [translation("s-1", "session-a")]) == 0
    assert write_translations(migrated, [translation("s-2", "session-b")]) == 1
    assert write_translations(migrated, [translation("s-2", "session-b")]) == 0
    kept = [
        (t.summary_key, t.correlation_id) for t in stored(migrated, SESSION_SUMMARY_TRANSLATIONS)
    ]
    assert kept == [("s-1", "session-a"), ("s-2", "session-b")]
    with duckdb.connect(str(migrated), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM session_summary_translation_queue").fetchone() == (
            0,
        )


def test_a_stored_sample_is_refused_in_its_version_only(migrated: Path) -> None:
    assert write_samples(migrated, [sample("v1", "q-1"), sample("v1", "q-3")]) == 1
    assert write_samples(migrated, [sample("v2", "q-1"), sample("v2", "q-1")]) == 1
    assert write_samples(migrated, [sample("v1", "q-3"), sample("v2", "q-1")]) == 0
    kept = [(s.version, s.request_key) for s in stored(migrated, DATASET_SAMPLES)]
    assert sorted(kept) == [("v1", "q-1"), ("v1", "q-2"), ("v1", "q-3"), ("v2", "q-1")]


def test_a_keyless_file_from_before_the_prefix_gets_it_and_its_answers_are_found(
    tmp_path: Path,
) -> None:
    db = tmp_path / "keyless.duckdb"
    unkeyed = keyed_ddl(LLM_COMPLETIONS, "attempt_id").replace(
        ",\n        PRIMARY KEY (attempt_id)", ""
    )
    with duckdb.connect(str(db)) as con:
        con.execute(unkeyed)
        old = as_arrow(LLM_COMPLETIONS, [attempt_row(HEX_KEY, 1, "ok", "kept answer")])
        con.register(
            "old_row", old.drop_columns([c for c in ADDED_COLUMNS if c in old.column_names])
        )
        con.execute("INSERT INTO llm_completions BY NAME SELECT * FROM old_row")
    found = CompletionStore(db).finished([HEX_KEY])
    assert {k: c.content for k, c in found.items()} == {HEX_KEY: "kept answer"}
    assert [r.key_prefix for r in stored(db, LLM_COMPLETIONS)] == [key_prefix(HEX_KEY)]


def test_a_file_from_before_cached_prompt_tokens_gets_the_column_in_place(
    tmp_path: Path,
) -> None:
    db = tmp_path / "before-cache.duckdb"
    # Today's DDL without its last column: the layout of files from before it.
    before = LLM_COMPLETIONS.ddl.replace(
        "key_prefix BIGINT NOT NULL,\n        cached_prompt_tokens BIGINT",
        "key_prefix BIGINT NOT NULL",
    )
    assert "cached_prompt_tokens" not in before
    with duckdb.connect(str(db)) as con:
        con.execute(before)
        row = dataclasses.replace(
            attempt_row(HEX_KEY, 1, "ok", "kept answer"), key_prefix=key_prefix(HEX_KEY)
        )
        old = as_arrow(LLM_COMPLETIONS, [row]).drop_columns(["cached_prompt_tokens"])
        con.register("old_row", old)
        con.execute("INSERT INTO llm_completions BY NAME SELECT * FROM old_row")
        rowid_before = con.execute("SELECT rowid FROM llm_completions").fetchall()

    store = CompletionStore(db, run_id="run-new")
    # The first connection that may write adds the column; the row stays where it was.
    assert {k: c.content for k, c in store.finished([HEX_KEY]).items()} == {HEX_KEY: "kept answer"}
    store.record(
        Attempt("k-new", "task", "role", "slot", "model", "llamacpp", "ok", content="new",
                prompt_tokens=44, completion_tokens=2, cached_prompt_tokens=40),
        planned("k-new"),
    )  # fmt: skip
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE "
                           "'llm_completions%'").fetchone() == (1,)  # fmt: skip
        got = con.execute(
            "SELECT rowid, request_key, cached_prompt_tokens FROM llm_completions ORDER BY rowid"
        ).fetchall()
        assert got == [(rowid_before[0][0], HEX_KEY, None), (1, "k-new", 40)]
        # Measured only where the server said: the old row is neither a hit nor a miss.
        assert con.execute(
            "SELECT attempts, reported, cached_prompt_tokens FROM slot_prefill"
        ).fetchone() == (2, 1, 40)
    # Once: a second upgrade finds nothing to do.
    with storage.connect(db) as con:
        assert registry.migrate(con) == []


def test_a_file_from_before_gates_gets_the_column_and_its_summaries_stay(tmp_path: Path) -> None:
    db = tmp_path / "before-gates.duckdb"
    old_summary = summary("s-old", "session-a", 2)
    with duckdb.connect(str(db)) as con:
        con.execute(SESSION_SUMMARIES.ddl.replace("        gate VARCHAR,\n", ""))
        con.register("old_row", as_arrow(SESSION_SUMMARIES, [old_summary]).drop_columns(["gate"]))
        con.execute("INSERT INTO session_summaries BY NAME SELECT * FROM old_row")
    # The first connection that may write adds the column (once: then nothing is left to do).
    with storage.connect(db) as con:
        assert registry.migrate(con) == []
    # A summary stored after the upgrade carries its cause; the old one reads NULL (it was
    # never checked), and is still found, so it is not written again.
    new = dataclasses.replace(summary("s-new", "session-a", 4), gate="cut_off")
    assert write_summaries(db, [old_summary, new]) == 1
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("SELECT request_key, gate FROM session_summaries ORDER BY request_key")
        assert got.fetchall() == [("s-new", "cut_off"), ("s-old", None)]
