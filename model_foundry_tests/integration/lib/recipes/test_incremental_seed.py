"""An incremental SQL seed over the inbox, on the slot simulator with a real DuckDB file: each
run takes only the rows past the last run's mark, numbered on from the last run's, and a run
that fails before its cells are stored leaves the mark where it was."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import jinja2
import pytest

from model_foundry.lib import storage
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.recipes.seeds import SeedMark, SeedRow, advance_mark, past_mark, read_mark
from model_foundry.lib.recipes.spec import RecipeError
from model_foundry_tests.recipe_helpers import NEW_SEARCHES, QUESTIONS, generate, land_searches
from model_foundry_tests.slot_fixtures import Slots, requests_served

pytestmark = pytest.mark.timeout(300)


def _rows(db: Path, sql: str, *params: object) -> list[tuple]:
    with storage.connect(db, read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def _mark(db: Path) -> SeedMark:
    with storage.connect(db, read_only=True) as con:
        return read_mark(con, "new_searches")


def test_the_second_run_takes_only_the_new_rows_numbered_on(tmp_path, db_path, fast_slots) -> None:
    slots = Slots(fast_slots, tmp_path / "locks")
    land_searches(db_path, QUESTIONS[:2])
    land_searches(db_path, QUESTIONS[2:3])
    first = generate(tmp_path, NEW_SEARCHES, db_path, slots)
    assert first.rows == 3 and first.llm_cells_asked == 3 and first.complete_rows() == 3
    (last_commit,) = _rows(db_path, "SELECT max(commit_seq) FROM pipeline_event_inbox")[0]
    assert _mark(db_path) == SeedMark(last_commit, 3)
    assert first.metadata()["seed_mark"] == last_commit

    land_searches(db_path, QUESTIONS[3:])
    served = requests_served(fast_slots)
    second = generate(tmp_path, NEW_SEARCHES, db_path, slots)
    # Only the new search: one row, one request.
    assert second.rows == 1 and second.llm_cells_asked == 1 and second.cells_reused == 0
    assert requests_served(fast_slots) == served + 1
    assert _mark(db_path) == SeedMark(last_commit + 1, 4)
    shown = _rows(db_path, "SELECT row_index, query FROM recipe_new_searches ORDER BY row_index")
    assert shown == list(enumerate(QUESTIONS))

    # Nothing new: no row, nothing asked, the mark stays.
    third = generate(tmp_path, NEW_SEARCHES, db_path, slots)
    assert third.rows == 0 and third.llm_cells_asked == 0 and third.seed_mark is None
    assert _mark(db_path) == SeedMark(last_commit + 1, 4)


def test_a_run_that_fails_before_its_cells_are_stored_keeps_the_old_mark(
    tmp_path, db_path, fast_slots
) -> None:
    slots = Slots(fast_slots, tmp_path / "locks")
    land_searches(db_path, QUESTIONS[:2])
    broken = copy.deepcopy(NEW_SEARCHES)
    # Renders only at run time, after the answers are stored: the run dies in its last wave.
    broken["columns"].append({"name": "broken", "type": "expression", "expr": "{{ answer.x }}"})
    with pytest.raises(jinja2.UndefinedError):
        generate(tmp_path, broken, db_path, slots)
    assert _mark(db_path) == SeedMark()
    (answers,) = _rows(db_path, "SELECT count(*) FROM dataset_recipe_cells "
                       "WHERE column_name = 'answer'")[0]  # fmt: skip
    assert answers == 2
    # The next run reads the same rows from the old mark and asks nothing it has.
    served = requests_served(fast_slots)
    again = generate(tmp_path, NEW_SEARCHES, db_path, slots)
    assert again.rows == 2 and again.llm_cells_asked == 0 and again.cells_reused == 2
    assert requests_served(fast_slots) == served
    assert _mark(db_path).next_index == 2
    shown = _rows(db_path, "SELECT row_index, query FROM recipe_new_searches ORDER BY row_index")
    assert shown == list(enumerate(QUESTIONS[:2]))


def test_the_mark_stops_before_the_first_row_still_waiting_for_an_answer(db_path) -> None:
    recipe = parse_recipe(copy.deepcopy(NEW_SEARCHES), "r/defs.yaml")
    storage.run_in_transaction(db_path, lambda con: None)
    rows = [SeedRow("a", 5, {}, 10), SeedRow("b", 6, {}, 10), SeedRow("c", 7, {}, 11),
            SeedRow("d", 8, {}, 12)]  # fmt: skip
    assert advance_mark(db_path, recipe, rows, {"c"}, "r1") == SeedMark(10, 7)
    assert _mark(db_path) == SeedMark(10, 7)
    # Waiting from the first row on: the mark stays.
    assert advance_mark(db_path, recipe, rows, {"a"}, "r2") is None
    assert advance_mark(db_path, recipe, rows, set(), "r3") == SeedMark(12, 9)
    assert _mark(db_path) == SeedMark(12, 9)


@pytest.mark.parametrize(
    ("sql", "sentence"),
    [
        ("SELECT payload ->> '$.query' AS query FROM pipeline_event_inbox",
         "seed.incremental: the query's rows have no column 'commit_seq' (they have: query)"),
        ("SELECT payload ->> '$.query' AS query, subject AS commit_seq FROM pipeline_event_inbox",
         "seed.incremental: column 'commit_seq' is VARCHAR, not an integer position"),
    ],
    ids=["missing", "not-integer"],
)  # fmt: skip
def test_a_position_column_the_query_lacks_is_one_sentence(
    tmp_path, db_path, fast_slots, sql: str, sentence: str
) -> None:
    land_searches(db_path, QUESTIONS[:1])
    bad = copy.deepcopy(NEW_SEARCHES)
    bad["seed"]["sql"] = sql
    with pytest.raises(RecipeError) as caught:
        generate(tmp_path, bad, db_path, Slots(fast_slots, tmp_path / "locks"))
    assert str(caught.value) == f"{tmp_path / 'defs.yaml'}: {sentence}"


def test_the_mark_reaches_the_inbox_scan_so_old_row_groups_are_skipped(db_path) -> None:
    land_searches(db_path, QUESTIONS[:2])
    land_searches(db_path, QUESTIONS[2:])
    with storage.connect(db_path, read_only=True) as con:
        rel = past_mark(con.sql(NEW_SEARCHES["seed"]["sql"]), "commit_seq", SeedMark(1, 2))
        plan = rel.explain()
        taken = rel.fetchall()
    scan = plan[plan.index("Seq Scan") :]
    assert "pipeline_event_inbox" in scan and re.search(r"Filters:.*commit_seq\s*>\s*1", scan, re.S)
    assert sorted(q for q, _ in taken) == sorted(QUESTIONS[2:])
