"""Downstream assets in process: real nats-server, slot simulator over HTTP, DuckDB files.

Inbox -> typed tables -> summaries -> translations -> throughput; reruns with nothing new are
zero-count successes; new chat re-summarises only its session; failed requests are retried
by the next run and succeeded ones never resent.

What the unit, integration and system tests of ``defs/test_pipeline_assets.py`` share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_foundry.defs.inbox_tables.assets import inbox_tables
from model_foundry.defs.resources import FoundryDuckDB, NatsResource, SlotsResource
from model_foundry.defs.summaries.assets import session_summaries, session_summary_translations
from model_foundry.defs.throughput.assets import slot_throughput
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.pipeline_helpers import slot_simulator_process

DOWNSTREAM = [inbox_tables, session_summaries, session_summary_translations, slot_throughput]


@pytest.fixture(name="slot_path", scope="module")
def slot_path_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with slot_simulator_process(tmp_path_factory.mktemp("sim"), speed=50) as path:
        yield path


def resources(nats: NatsClient, db_path: Path, slot_path: Path) -> dict[str, Any]:
    return {
        "nats": NatsResource.of(nats),
        "duckdb": FoundryDuckDB(database=str(db_path)),
        "slots": SlotsResource(slot_file=str(slot_path)),
    }
