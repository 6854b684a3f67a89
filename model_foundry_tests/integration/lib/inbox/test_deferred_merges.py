"""The drain's writer leaves DuckDB's small row groups unmerged at each release and merges
them at the release after every ``MERGE_EVERY_COMMITS``-th commit, on real DuckDB files."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
from nats.aio.msg import Msg

from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.inbox.commit_spans import COMMITS
from model_foundry.lib.inbox.drain.commit import MERGE_EVERY_COMMITS, commit_batch, ready_batch
from model_foundry.lib.inbox.drain.record import Checked
from model_foundry.lib.storage import BatchWriter, connect

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ROWS_PER_WRITE = 5000


def _row_groups(db: Path, table: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "SELECT count(DISTINCT row_group_id) FROM pragma_storage_info(?)", [table]
        ).fetchone()
    assert row is not None
    return int(row[0])


def _append(start: int) -> Callable[[duckdb.DuckDBPyConnection], None]:
    def work(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("CREATE TABLE IF NOT EXISTS t (a BIGINT, b VARCHAR)")
        con.execute(
            "INSERT INTO t SELECT i, repeat('x', 40) || i FROM range(?, ?) r(i)",
            [start, start + ROWS_PER_WRITE],
        )

    return work


def _writes_each_released(writer: BatchWriter, writes: int, first: int = 0) -> None:
    for n in range(first, first + writes):
        writer.write(_append(n * ROWS_PER_WRITE))
        writer.release()


def test_a_plain_writer_merges_at_every_release_and_a_deferring_one_only_when_asked(
    tmp_path: Path,
) -> None:
    plain, deferring = tmp_path / "plain.duckdb", tmp_path / "deferring.duckdb"
    _writes_each_released(BatchWriter(plain), 8)
    writer = BatchWriter(deferring, defer_merges=True)
    _writes_each_released(writer, 8)

    # DuckDB's own behaviour, which the deferral exists for: the plain writer's releases
    # merged its small row groups as they came; the deferring writer left one per release.
    assert _row_groups(plain, "t") <= 2
    assert _row_groups(deferring, "t") == 8

    writer.merge_at_release()
    writer.write(_append(8 * ROWS_PER_WRITE))
    writer.release()
    assert _row_groups(deferring, "t") == 1
    # Asked once: the release after that leaves its row group as it is again.
    _writes_each_released(writer, 1, first=9)
    assert _row_groups(deferring, "t") == 2
    with duckdb.connect(str(deferring), read_only=True) as con:
        assert con.execute("SELECT count(*), count(DISTINCT a) FROM t").fetchone() == (
            10 * ROWS_PER_WRITE,
            10 * ROWS_PER_WRITE,
        )


def _batch(first_seq: int, size: int) -> list[Checked]:
    checked = []
    for seq in range(first_seq, first_seq + size):
        body = {
            "event_id": f"e{seq}",
            "correlation_id": "sess",
            "occurred_at": (T0 + timedelta(seconds=seq)).isoformat(),
            "payload": {"tool": "grep", "arguments": {"n": seq}},
        }
        item = validate_message(
            "llm.tool_call", json.dumps(body).encode(), seq, T0, T0 + timedelta(seconds=seq)
        )
        assert isinstance(item, InboxEvent)
        checked.append(Checked(msg=Msg(_client=None), item=item, deliveries=1))  # type: ignore[arg-type]
    return checked


def test_the_drains_commits_merge_row_groups_after_every_merge_every_commits(
    tmp_path: Path,
) -> None:
    db = tmp_path / "inbox.duckdb"
    with connect(db) as con:
        # A file with history: the next commit numbers are the last two before a merge.
        con.execute(f"UPDATE {COMMITS} SET last_commit_seq = ?", [MERGE_EVERY_COMMITS - 3])
    # As the drain makes it; max_hold_s=0 lets the file go after every commit.
    writer = BatchWriter(db, max_hold_s=0, defer_merges=True)
    seq = 1
    for _ in range(2):
        committed = commit_batch(writer, "S", ready_batch(_batch(seq, 3000)), budget=5)
        assert committed.error is None and len(committed.result.inserted_ids) == 3000
        seq += 3000
    assert _row_groups(db, "pipeline_event_inbox") == 2

    committed = commit_batch(writer, "S", ready_batch(_batch(seq, 3000)), budget=5)
    assert committed.result.commit_seqs == [MERGE_EVERY_COMMITS]
    assert _row_groups(db, "pipeline_event_inbox") == 1
    with connect(db, read_only=True) as con:
        assert con.execute(
            "SELECT count(DISTINCT event_id) FROM pipeline_event_inbox"
        ).fetchone() == (9000,)
