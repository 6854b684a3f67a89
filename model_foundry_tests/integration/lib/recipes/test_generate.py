"""Dataset recipes on the slot simulator with a real DuckDB file: every column type, cells
asked exactly once, a changed template re-asking only what it changes, rows generated row by
row."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from model_foundry.lib import storage
from model_foundry.lib.exports.hygiene import export_hygiene
from model_foundry.lib.llm import LlmRun
from model_foundry.lib.recipes.export import export_recipe, recipe_export_request
from model_foundry.lib.recipes.generate import (
    PREVIEW_VERSION,
    ROWS_AHEAD,
    ROWS_PER_STEP,
    RUN_VERSION,
    Generation,
)
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.recipes.seeds import seed_rows
from model_foundry.lib.recipes.spec import RecipeError
from model_foundry.lib.slots.config import load_slot_file
from model_foundry_tests.pipeline_helpers import slot_simulator_process
from model_foundry_tests.recipe_helpers import (
    EVERY_COLUMN,
    PAIRWISE,
    QUESTIONS,
    generate,
    write_recipe,
)
from model_foundry_tests.slot_fixtures import Slots, requests_served, set_faults

pytestmark = pytest.mark.timeout(300)


def _rows(db: Path, sql: str, *params: object) -> list[dict]:
    with storage.connect(db, read_only=True) as con:
        cursor = con.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def test_every_column_type_fills_its_cells_and_the_view(tmp_path, db_path, fast_slots) -> None:
    folder = tmp_path / "every"
    write_recipe(folder, EVERY_COLUMN)
    slots = Slots(fast_slots, tmp_path / "locks")
    outcome = generate(folder, EVERY_COLUMN, db_path, slots)
    n = len(QUESTIONS)
    assert outcome.rows == n and outcome.llm_cells_unanswered == 0
    # answer: 2 samples per row; facts and score: one each.
    assert outcome.llm_cells_asked == 4 * n
    rows = _rows(db_path, "SELECT * FROM recipe_every_column ORDER BY row_index")
    assert [r["query"] for r in rows] == QUESTIONS
    for r in rows:
        assert r["tone"] in ("plain", "formal") and 50 <= r["budget"] <= 200
        assert r["question"] == f"In a {r['tone']} tone: {r['query']}?"
        assert r["answer"] and isinstance(r["facts_topic"], str)
        assert isinstance(r["facts_level"], int) and 1 <= r["facts_level"] <= 3
        assert isinstance(r["score_helpful"], int) and 1 <= r["score_helpful"] <= 5
        assert r["long_enough"] is True
        # The simulator's answers are prose: they do not parse as Python, and the row is
        # kept with the cause.
        assert r["is_python"] is False and r["rejected"] is True
        assert "is_python: Python that does not parse" in r["causes"]
    by_column = outcome.metadata()["cells_by_column"]
    assert by_column["answer"] == {"ok": 2 * n} and by_column["is_python"] == {"rejected": n}
    samples = _rows(db_path, "SELECT count(*) AS n FROM dataset_recipe_cells "
                    "WHERE column_name = 'answer' AND sample_index = 1")  # fmt: skip
    assert samples[0]["n"] == n
    wide = _rows(db_path, "SELECT * FROM dataset_recipe_rows WHERE recipe = 'every_column'")
    assert len(wide) == n and all(w["rejected"] for w in wide)
    # The judge is grandpa (the shipped file's judge), the structured column the cheap role's.
    slots_by_column = dict(
        (r["column_name"], r["slots"]) for r in _rows(
            db_path, "SELECT column_name, list(DISTINCT slot) AS slots FROM dataset_recipe_cells "
            "WHERE slot IS NOT NULL GROUP BY 1")
    )  # fmt: skip
    assert slots_by_column["score"] == ["grandpa"]
    assert slots_by_column["facts"] == ["kindergarten"]


def test_a_rerun_asks_nothing_and_a_changed_template_reasks_only_its_column_and_readers(
    tmp_path, db_path, fast_slots
) -> None:
    folder = tmp_path / "rerun"
    write_recipe(folder, EVERY_COLUMN)
    slots = Slots(fast_slots, tmp_path / "locks")
    first = generate(folder, EVERY_COLUMN, db_path, slots)
    cells = first.cells_written
    served = requests_served(fast_slots)
    again = generate(folder, EVERY_COLUMN, db_path, slots)
    assert requests_served(fast_slots) == served
    assert again.llm_cells_asked == 0 and again.cells_written == 0
    assert again.cells_reused == 4 * len(QUESTIONS)
    # facts is read by score: both are asked again, answer is not.
    changed = copy.deepcopy(EVERY_COLUMN)
    changed["columns"][5]["prompt"] = "The topic and the level of: {{ answer }}"
    third = generate(folder, changed, db_path, slots)
    n = len(QUESTIONS)
    assert third.llm_cells_asked == 2 * n
    assert requests_served(fast_slots) == served + 2 * n
    assert third.cells_written == 2 * n
    per_column = {
        r["column_name"]: r["n"] for r in _rows(
            db_path, "SELECT column_name, count(*) AS n FROM dataset_recipe_cells "
            "WHERE recipe = 'every_column' AND sample_index = 0 GROUP BY 1")
    }  # fmt: skip
    assert per_column["facts"] == per_column["score"] == 2 * n
    assert per_column["answer"] == per_column["question"] == n
    assert cells == sum(per_column.values()) - 2 * n + n  # + answer's second samples


def test_preview_cells_are_not_asked_again_by_a_run(tmp_path, db_path, fast_slots) -> None:
    folder = tmp_path / "preview"
    write_recipe(folder, EVERY_COLUMN)
    slots = Slots(fast_slots, tmp_path / "locks")
    preview = generate(folder, EVERY_COLUMN, db_path, slots, version=PREVIEW_VERSION, limit=2)
    assert preview.rows == 2 and preview.llm_cells_asked == 8
    run = generate(folder, EVERY_COLUMN, db_path, slots)
    # The two previewed rows come from their stored cells; only the other two are asked.
    assert run.llm_cells_asked == 8 and run.cells_reused == 8
    versions = _rows(db_path, "SELECT version, count(DISTINCT row_id) AS n FROM "
                     "dataset_recipe_cells GROUP BY 1 ORDER BY 1")  # fmt: skip
    assert versions == [{"version": "preview", "n": 2}, {"version": "run", "n": 4}]


def test_a_seed_from_sql_over_the_pipeline_tables(tmp_path, db_path, fast_slots) -> None:
    with storage.connect(db_path) as con:
        for i, q in enumerate([*QUESTIONS, QUESTIONS[0]]):
            con.execute(
                "INSERT INTO semantic_searches (event_id, correlation_id, occurred_at, query) "
                "VALUES (?, 's1', now(), ?)",
                [f"e{i}", q],
            )
    attributes = {
        "name": "from_sql",
        "seed": {"sql": "SELECT query FROM semantic_searches ORDER BY event_id"},
        "columns": [
            {"name": "query", "type": "seed"},
            {"name": "answer", "type": "llm_text", "role": "cheap", "prompt": "{{ query }}"},
        ],
    }
    folder = tmp_path / "sql"
    outcome = generate(folder, attributes, db_path, Slots(fast_slots, tmp_path / "locks"))
    # The repeated search is one row.
    assert outcome.rows == len(QUESTIONS) and outcome.complete_rows() == len(QUESTIONS)


def test_a_role_the_slot_file_lacks_fails_at_run_time_in_one_sentence(
    tmp_path, db_path, fast_slots
) -> None:
    attributes = copy.deepcopy(EVERY_COLUMN)
    attributes["columns"][4]["role"] = "poet"
    folder = tmp_path / "role"
    write_recipe(folder, attributes)
    served = requests_served(fast_slots)
    with pytest.raises(RecipeError) as caught:
        generate(folder, attributes, db_path, Slots(fast_slots, tmp_path / "locks"))
    assert str(caught.value).startswith(
        f"{folder / 'defs.yaml'}: columns.answer.role: the slot file {fast_slots} has no role "
        "'poet' (it has: "
    )
    assert requests_served(fast_slots) == served


TWO_COLUMNS: dict = {
    "name": "two_columns",
    "seed": {"file": "seed.jsonl"},
    "columns": [
        {"name": "query", "type": "seed"},
        {"name": "answer", "type": "llm_text", "role": "worker", "prompt": "{{ query }}"},
        {"name": "facts", "type": "llm_text", "role": "cheap", "prompt": "Facts: {{ answer }}"},
    ],
}


def test_a_rows_next_column_is_asked_before_other_rows_first_column_is_done(
    tmp_path, db_path
) -> None:
    """Row by row: no barrier between columns, so some row's ``facts`` is sent while other
    rows' ``answer`` is yet to be sent (the worker slot's 3 places take 30 answers in ten
    turns)."""
    seeds = [f"{q} (variant {i})" for i in range(8) for q in QUESTIONS][:30]
    folder = tmp_path / "rows"
    write_recipe(folder, TWO_COLUMNS, seeds=seeds)
    with slot_simulator_process(tmp_path / "sim", speed=4) as path:
        outcome = generate(folder, TWO_COLUMNS, db_path, Slots(path, tmp_path / "locks"))
    assert outcome.complete_rows() == 30 and outcome.llm_cells_asked == 60
    started = {
        r["column_name"]: r for r in _rows(
            db_path, "SELECT c.column_name, min(l.started_at) AS first, "
            "max(l.started_at) AS last FROM dataset_recipe_cells c JOIN llm_completions l "
            "USING (request_key) GROUP BY 1")
    }  # fmt: skip
    assert started["facts"]["first"] < started["answer"]["last"], started


def test_rows_are_begun_a_step_at_a_time_and_a_run_past_done_steps_asks_only_the_rest(
    tmp_path, db_path, fast_slots
) -> None:
    """The first requests go out once ``ROWS_AHEAD`` are planned, not after every row, and
    each answer lets more rows begin up to that mark; a run whose first steps are all stored
    goes on to the rows that are not."""
    slots = Slots(fast_slots, tmp_path / "locks")
    many = tmp_path / "many"
    write_recipe(many, TWO_COLUMNS, seeds=[f"question {i}" for i in range(ROWS_AHEAD + 100)])
    recipe = parse_recipe(copy.deepcopy(TWO_COLUMNS), str(many / "defs.yaml"))
    rows = seed_rows(recipe, db_path, many)
    with LlmRun(db_path, slots, run_id=None, asset="t", log=logging.getLogger("t")) as run:
        generation = Generation(recipe, run, rows, RUN_VERSION, None)
        first = generation.feed()
        # One answer a row (the first column), whole steps of rows.
        assert len(first) == ROWS_AHEAD and ROWS_AHEAD % ROWS_PER_STEP == 0
        assert generation.feed() == []  # nothing more begins while ROWS_AHEAD wait
    seeds = [f"{q} (variant {i})" for i in range(12) for q in QUESTIONS][:40]
    folder = tmp_path / "steps"
    write_recipe(folder, TWO_COLUMNS, seeds=seeds)
    # 20 rows done, then all 40: rows 0-15 (a whole step) and 16-19 are stored.
    done = generate(folder, TWO_COLUMNS, db_path, slots, limit=20)
    assert done.complete_rows() == 20 and done.llm_cells_asked == 40
    served = requests_served(fast_slots)
    rest = generate(folder, TWO_COLUMNS, db_path, slots)
    assert rest.complete_rows() == 40 and rest.cells_reused == 2 * 20  # the LLM cells
    assert rest.llm_cells_asked == 40 and requests_served(fast_slots) == served + 40


def test_a_run_that_lost_a_column_reasks_only_its_cells_and_nothing_twice(
    tmp_path, db_path, fast_slots
) -> None:
    """The judge's slot refuses every request: the run keeps the rest and asks again only
    the judge's cells, and no request is answered twice."""
    folder = tmp_path / "lost"
    write_recipe(folder, EVERY_COLUMN)
    slots = Slots(fast_slots, tmp_path / "locks")
    judge = load_slot_file(fast_slots).slots["grandpa"]
    n = len(QUESTIONS)
    set_faults(judge, error_rate=1.0, error_status=400)
    try:
        first = generate(folder, EVERY_COLUMN, db_path, slots)
    finally:
        set_faults(judge, error_rate=0.0, error_status=500)
    assert first.llm_cells_asked == 4 * n and first.llm_cells_unanswered == n
    assert all(first.blocked[row] == {"score", "is_python"} for row in first.values)
    served = requests_served(fast_slots)
    again = generate(folder, EVERY_COLUMN, db_path, slots)
    assert again.llm_cells_asked == n and again.cells_reused == 3 * n
    assert requests_served(fast_slots) == served + n
    assert again.llm_cells_unanswered == 0
    twice = _rows(db_path, "SELECT request_key FROM llm_completions WHERE status = 'ok' "
                  "GROUP BY 1 HAVING count(*) > 1")  # fmt: skip
    assert twice == []
    cells = _rows(db_path, "SELECT count(*) AS n FROM dataset_recipe_cells "
                  "WHERE column_name = 'score'")  # fmt: skip
    assert cells == [{"n": n}]


def test_a_pairwise_judge_asks_both_orders_once_with_a_shared_prefix(
    tmp_path, db_path, fast_slots
) -> None:
    folder = tmp_path / "pairwise"
    write_recipe(folder, PAIRWISE)
    slots = Slots(fast_slots, tmp_path / "locks")
    outcome = generate(folder, PAIRWISE, db_path, slots)
    n = len(QUESTIONS)
    # Two answers per row, and the judge twice per row (one cell).
    assert outcome.llm_cells_asked == 4 * n and outcome.complete_rows() == n
    assert outcome.metadata()["cells_by_column"]["preference"] == {"ok": n}
    asked = _rows(db_path, "SELECT slot, request FROM llm_completions "
                  "WHERE task = 'recipe:pairwise/preference' AND status = 'ok'")  # fmt: skip
    assert len(asked) == 2 * n and {a["slot"] for a in asked} == {"grandpa"}
    rows = _rows(db_path, "SELECT * FROM recipe_pairwise ORDER BY row_index")
    assert [r["query"] for r in rows] == QUESTIONS
    users = [json.loads(a["request"])["messages"] for a in asked]
    for r in rows:
        first = f"Answer 1:\n{r['answer']}\n\nAnswer 2:\n{r['cheap_answer']}"
        second = f"Answer 1:\n{r['cheap_answer']}\n\nAnswer 2:\n{r['answer']}"
        ab = [m for m in users if m[1]["content"].endswith(first)]
        ba = [m for m in users if m[1]["content"].endswith(second)]
        assert len(ab) == len(ba) == 1
        # Everything before the answers is byte-identical between the two orders.
        assert ab[0][0] == ba[0][0]
        assert ab[0][1]["content"].removesuffix(first) == ba[0][1]["content"].removesuffix(second)
        assert ab[0][1]["content"].startswith(f"Question: {r['query']}\n\n")
        assert r["preference_winner"] in ("answer", "cheap_answer", "tie")
        assert isinstance(r["preference_agree"], bool)
        if not r["preference_agree"]:
            assert r["preference_winner"] == "tie"
        verdicts = json.loads(r["preference"])
        assert set(verdicts["verdict_ab"]) == {"helpful_1", "helpful_2", "clear_1", "clear_2",
                                               "reason"}  # fmt: skip
        assert (
            r["preference_helpful_a"]
            == (verdicts["verdict_ab"]["helpful_1"] + verdicts["verdict_ba"]["helpful_2"]) / 2
        )
    # A rerun asks nothing: both orders come from the stored cell.
    served = requests_served(fast_slots)
    again = generate(folder, PAIRWISE, db_path, slots)
    assert requests_served(fast_slots) == served
    assert again.llm_cells_asked == 0 and again.cells_written == 0


def test_a_pairwise_judge_is_exported_with_typed_sub_columns(tmp_path, db_path, fast_slots) -> None:
    folder = tmp_path / "pairwise_export"
    write_recipe(folder, PAIRWISE)
    generate(folder, PAIRWISE, db_path, Slots(fast_slots, tmp_path / "locks"))
    recipe = parse_recipe(copy.deepcopy(PAIRWISE), str(folder / "defs.yaml"))
    request = recipe_export_request(output_dir=tmp_path / "out", version="v1", test_share=0.25)
    outcome = export_recipe(db_path, recipe, request, export_hygiene(db_path, "pairwise", 0.25))
    table = pa.concat_tables(
        pq.read_table(p) for p in sorted((outcome.path / "hf" / "rows").glob("*.parquet"))
    )
    assert table.num_rows == len(QUESTIONS)
    assert table.schema.field("preference_winner").type == pa.string()
    assert table.schema.field("preference_agree").type == pa.bool_()
    assert table.schema.field("preference_helpful_a").type == pa.float64()
    assert table.schema.field("preference_clear_b").type == pa.float64()
    for row in table.to_pylist():
        assert row["preference_winner"] in ("answer", "cheap_answer", "tie")
        assert json.loads(row["preference"])["winner"] == row["preference_winner"]
