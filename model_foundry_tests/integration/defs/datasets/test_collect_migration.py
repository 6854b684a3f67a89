"""A data folder written by ``dataset collect`` before it was a recipe (the fixture made by
``fixtures/collect_before_recipes/make_fixture.py`` on that code), collected again on the slot
simulator: its samples and verdicts become the built-in recipes' cells once, and nothing they
hold is asked again."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from model_foundry.defs.datasets.assets import dataset_samples
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib.recipes.migration import JUDGE_STEP, STEP
from model_foundry.lib.tables.judgements import JUDGED_PAIRS_SQL
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.pipeline_helpers import rows
from model_foundry_tests.shared.defs.datasets.assets import metadata
from model_foundry_tests.shared.defs.datasets.judgements import _collect as _collect_judged
from model_foundry_tests.shared.defs.datasets.judgements import _meta
from model_foundry_tests.slot_fixtures import requests_served

pytestmark = pytest.mark.timeout(300)

FIXTURE = Path(__file__).parents[3] / "fixtures" / "collect_before_recipes"
# As make_fixture.py collected it (the judge is asked for where a test says so).
CONFIG = {
    "name": "ft",
    "version": "v1",
    "prompt_dir": str(FIXTURE),
    "include_chat_sessions": False,
    "samples_per_prompt": 2,
    "export": False,
}
SAMPLES = "SELECT role, prompt_id, sample_index, request_key, response FROM dataset_samples "


def _open_fixture(db_path: Path) -> Path:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(FIXTURE / "collect.duckdb.gz", "rb") as src, db_path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return db_path


def _collect(db_path: Path, slot_path: Path, **config: Any) -> dict[str, Any]:
    with quiet_instance() as instance:
        result = dg.materialize(
            [dataset_samples],
            instance=instance,
            resources={
                "duckdb": FoundryDuckDB(database=str(db_path)),
                "slots": SlotsResource(slot_file=str(slot_path)),
            },
            run_config={"ops": {"dataset_samples": {"config": {**CONFIG, **config}}}},
        )
    assert result.success
    return metadata(result)


def test_the_fixture_collected_again_asks_nothing_and_keeps_its_samples(
    tmp_path: Path, fast_slots: Path
) -> None:
    db = _open_fixture(tmp_path / "data" / "foundry.duckdb")
    before = rows(db, SAMPLES + "WHERE version = 'v1' ORDER BY ALL")
    assert len(before) == 20

    served = requests_served(fast_slots)
    again = _collect(db, fast_slots)
    assert requests_served(fast_slots) == served
    # Every answer is a cell the migration made: the recipe asks none of them, not even of
    # the completions store.
    assert again["samples_migrated"] == 20
    assert again["cells_asked"] == 0 and again["cells_reused"] == 20
    assert again["sent"] == 0 and again["samples_written"] == 0
    assert rows(db, SAMPLES + "WHERE version = 'v1' ORDER BY ALL") == before
    (cells,) = rows(db, "SELECT count(*) FROM dataset_recipe_cells "
                    "WHERE recipe = 'collect_ft' AND column_type = 'llm_text'")[0]  # fmt: skip
    assert cells == 20
    assert rows(db, "SELECT position FROM downstream_positions WHERE step = ?", STEP) == [(20,)]

    # A new version of the same prompts: the same answers, none asked; the migration does
    # not run twice.
    fresh = _collect(db, fast_slots, version="v2")
    assert requests_served(fast_slots) == served
    assert fresh["samples_migrated"] == 0 and fresh["cells_asked"] == 0
    assert fresh["samples_written"] == 20
    assert rows(db, SAMPLES + "WHERE version = 'v2' ORDER BY ALL") == before


def test_the_migrated_cells_alone_answer_when_the_completions_are_gone(
    tmp_path: Path, fast_slots: Path
) -> None:
    """What was paid for lives in the samples, so in their cells: with the completions store
    emptied, collecting again still sends nothing, and the new version's samples are the old
    answers."""
    db = _open_fixture(tmp_path / "data" / "foundry.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM llm_completions")
    before = rows(db, SAMPLES + "WHERE version = 'v1' ORDER BY ALL")

    served = requests_served(fast_slots)
    again = _collect(db, fast_slots, version="v2")
    assert requests_served(fast_slots) == served
    assert again["sent"] == 0 and again["cells_asked"] == 0
    assert rows(db, SAMPLES + "WHERE version = 'v2' ORDER BY ALL") == before


OLD_PAIRS = """
SELECT answer_a, answer_b FROM dataset_judgements WHERE version = 'v1'
GROUP BY ALL HAVING count(DISTINCT winner) = 1 AND any_value(winner) <> 'tie'
ORDER BY ALL
"""
NEW_PAIRS = """
SELECT answer_a, answer_b FROM ({pairs}) WHERE version = 'v1' AND winner IN ('a', 'b')
ORDER BY ALL
"""


def test_the_fixture_judged_again_asks_the_judge_nothing(tmp_path: Path, fast_slots: Path) -> None:
    """The fixture's verdicts (two asks per comparison, as the judge before the recipe wrote
    them) become the judge recipe's cells once: judging the same version again sends no
    request, keeps its rows, and makes the same preference pairs the old rule made."""
    db = _open_fixture(tmp_path / "data" / "foundry.duckdb")
    asks = "SELECT * EXCLUDE (created_at) FROM dataset_judgements WHERE version = 'v1' "
    before = rows(db, asks + "ORDER BY ALL")
    old_pairs = rows(db, OLD_PAIRS)
    assert len(before) == 60 and 0 < len(old_pairs) < 30

    served = requests_served(fast_slots)
    result = _collect_judged(tmp_path, fast_slots, {**CONFIG, "judge": True}, db)
    assert result.success
    judged = _meta(result, "dataset_judgements")
    assert requests_served(fast_slots) == served
    assert judged["verdicts_migrated"] == 30
    assert judged["cells_reused"] == 30 and judged["cells_asked"] == 0
    assert judged["sent"] == 0
    assert rows(db, asks + "ORDER BY ALL") == before
    assert rows(db, NEW_PAIRS.format(pairs=JUDGED_PAIRS_SQL)) == old_pairs
    assert judged["preference_pairs"] == len(old_pairs)
    assert rows(db, "SELECT position FROM downstream_positions WHERE step = ?", JUDGE_STEP) == [
        (30,)
    ]
