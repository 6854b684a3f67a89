"""A bad slot file leaves the code location loading (the inbox sensors need no slots) and is
shown where a Dagster user looks: the slot file check fails with its sentence, and an asset
that needs the slots fails its run with that sentence, no stack."""

from pathlib import Path

import dagster as dg
import pytest

from model_foundry.defs.resources import SlotsResource
from model_foundry.lib.slots.config import SHIPPED_SLOT_FILE
from model_foundry_tests.slot_fixtures import bad_slot_file


def test_the_code_location_loads_with_a_bad_slot_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = bad_slot_file(tmp_path / "slots.yaml")
    monkeypatch.setenv("MODEL_FOUNDRY_SLOTS", str(path))
    from model_foundry.definitions import defs

    loaded = defs()
    sensors = {s.name for s in loaded.get_repository_def().sensor_defs}
    assert "inbox_llm_chat_persist_sensor" in sensors
    graph = loaded.resolve_asset_graph()
    checks = graph.get(dg.AssetKey("slot_throughput")).check_keys
    assert {c.name for c in checks} == {"slot_file_is_valid"}


def test_the_slot_file_check_fails_with_the_sentence(tmp_path: Path) -> None:
    from model_foundry.defs.throughput.checks import slot_file_is_valid

    path, sentence = bad_slot_file(tmp_path / "slots.yaml")
    result = slot_file_is_valid(slots=SlotsResource(slot_file=str(path)))
    assert not result.passed and result.description == sentence

    good = slot_file_is_valid(slots=SlotsResource(slot_file=str(SHIPPED_SLOT_FILE)))
    assert good.passed and good.metadata["profile"].value == "standard"


def test_an_asset_that_needs_the_slots_fails_with_the_sentence(tmp_path: Path) -> None:
    from model_foundry.defs.datasets.assets import dataset_samples
    from model_foundry.defs.resources import FoundryDuckDB

    path, sentence = bad_slot_file(tmp_path / "slots.yaml")
    result = dg.materialize(
        [dataset_samples],
        resources={
            "duckdb": FoundryDuckDB(database=str(tmp_path / "mf.duckdb")),
            "slots": SlotsResource(slot_file=str(path)),
        },
        run_config={"ops": {"dataset_samples": {"config": {"name": "refused"}}}},
        raise_on_error=False,
    )
    failure = result.failure_data_for_node("dataset_samples")
    assert failure is not None and failure.user_failure_data is not None
    assert failure.user_failure_data.description == sentence
    # The run shows the sentence, not a SlotFileError with its stack as the cause.
    assert failure.error is not None and failure.error.cause is None
    assert "SlotFileError" not in str(failure.error.to_string())
