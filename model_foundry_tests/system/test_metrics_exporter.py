"""The exporter answers while another process holds the DuckDB file for writing: the system
tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from model_foundry.lib import storage
from model_foundry_tests.metrics_helpers import exporter_process, scrape, total
from model_foundry_tests.pipeline_helpers import wait_for
from model_foundry_tests.shared.metrics_exporter import (
    WRITER,
    events,
    insert,
)

pytestmark = pytest.mark.timeout(120)

# A writer like a drain mid-run: it commits a batch and keeps the file open until told to stop.


def test_scrapes_answer_from_the_last_figures_while_a_writer_holds_the_file(
    db_path: Path, tmp_path: Path
) -> None:
    with storage.connect(db_path) as con:
        insert(con, events(0, 3))
    env = {"MODEL_FOUNDRY_DUCKDB": str(db_path), "MODEL_FOUNDRY_DATA_DIR": str(tmp_path / "data")}
    with exporter_process(
        tmp_path / "exp", extra_args=("--no-nats", "--refresh-s", "0.3"), **env
    ) as url:
        wait_for(
            lambda: total(scrape(url), "model_foundry_inbox_events_total") == 3, 30, "first figures"
        )
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert writer.stdout is not None
            assert writer.stdout.readline().strip() == "holding"
            busy = wait_for(
                lambda: (
                    total(
                        s := scrape(url),
                        "model_foundry_exporter_refresh_errors_total",
                        source="duckdb",
                        reason="busy",
                    )
                    >= 2
                    and s
                ),
                60,
                "reads that found the file busy",
            )
            # Every scrape above answered (scrape() asserts 200) while the file was held, with
            # the figures read before the writer took it, and says how old they are.
            assert total(busy, "model_foundry_inbox_events_total") == 3
            age = total(busy, "model_foundry_exporter_snapshot_age_seconds", source="duckdb")
            assert age > 0.3
        finally:
            writer.communicate("", timeout=30)
        assert writer.returncode == 0
        # The writer let go: the next read sees what it committed.
        wait_for(
            lambda: total(scrape(url), "model_foundry_inbox_events_total") == 5,
            30,
            "figures after the writer let go",
        )
