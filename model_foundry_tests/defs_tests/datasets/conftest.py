"""The fast slot simulator the dataset tests share (one per test module)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from model_foundry_tests.pipeline_helpers import slot_simulator_process


@pytest.fixture(scope="module")
def fast_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with slot_simulator_process(tmp_path_factory.mktemp("fast-sim"), speed=50) as path:
        yield path
