"""``model-foundry recipe check | preview | run`` as a user runs them, on the slot simulator
with a real DuckDB file; a run killed midway (SIGKILL) and run again asks no request twice."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from model_foundry.lib import storage
from model_foundry.lib.slots.config import load_slot_file
from model_foundry_tests.pipeline_helpers import (
    clean_env,
    count,
    slot_simulator_process,
    stop_process,
    wait_for,
)
from model_foundry_tests.recipe_helpers import EVERY_COLUMN, QUESTIONS, write_recipe
from model_foundry_tests.shared.cli.cli import cli
from model_foundry_tests.slot_fixtures import set_faults

pytestmark = pytest.mark.timeout(300)


def _env(tmp_path: Path, slots: Path) -> dict[str, str]:
    return {
        "MODEL_FOUNDRY_SLOTS": str(slots),
        "MODEL_FOUNDRY_DUCKDB": str(tmp_path / "data" / "recipes.duckdb"),
        "MODEL_FOUNDRY_DATA_DIR": str(tmp_path / "data"),
        "MODEL_FOUNDRY_SLOT_LIMITER": "flock",
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
    }


def test_check_says_ok_or_one_sentence(tmp_path: Path) -> None:
    ok = cli("recipe", "check", "search_questions")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip().endswith(
        "recipe search_questions is ok: 8 columns (query, style | question | answer, "
        "cheap_answer | facts, score, answer_length)"
    )
    bad = dict(EVERY_COLUMN, columns=[*EVERY_COLUMN["columns"][:-1],
                                      {"name": "x", "type": "judge"}])  # fmt: skip
    path = write_recipe(tmp_path / "bad", bad)
    result = cli("recipe", "check", "every_column", "--file", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"model-foundry: {path}: columns.x.type: unknown column type 'judge' (known: seed, "
        "sampler, expression, llm_text, llm_structured, llm_judge, validation)"
    ]
    missing = cli("recipe", "check", "nope", "--file", str(path))
    assert missing.stderr.strip() == (
        f"model-foundry: no recipe named 'nope' in {path} (known: every_column)"
    )


def test_check_lists_every_problem_of_a_file_a_line_each(tmp_path: Path) -> None:
    bad = copy.deepcopy(EVERY_COLUMN)
    bad["colour"] = "blue"
    columns = {c["name"]: c for c in bad["columns"]}
    columns["answer"].update(samples=0, temperature=0.2)
    columns["facts"]["prompt"] = "{{ anwser }}"
    columns["long_enough"]["type"] = "check"
    path = write_recipe(tmp_path / "bad", bad)
    result = cli("recipe", "check", "every_column", "--file", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"model-foundry: {path}: attributes.colour: is not a field of a recipe",
        f"model-foundry: {path}: columns.answer.temperature: is not a field of a llm_text column",
        f"model-foundry: {path}: columns.answer.samples: must be an integer >= 1",
        f"model-foundry: {path}: columns.long_enough.type: unknown column type 'check' "
        "(known: seed, sampler, expression, llm_text, llm_structured, llm_judge, validation)",
        f"model-foundry: {path}: columns.facts.prompt: names column 'anwser', which the "
        "recipe does not have",
    ]
    # A file that reads well: its schedule and its roles against the slot file, each a line.
    roles = copy.deepcopy(EVERY_COLUMN)
    roles["schedule"] = "every day"
    {c["name"]: c for c in roles["columns"]}["facts"]["role"] = "poet"
    path = write_recipe(tmp_path / "roles", roles)
    result = cli("recipe", "check", "every_column", "--file", str(path))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0] == f"model-foundry: {path}: schedule: 'every day' is not a cron string"
    assert (
        len(lines) == 2
        and lines[1].startswith(f"model-foundry: {path}: columns.facts.role: the slot file ")
        and "has no role 'poet'" in lines[1]
    )


@pytest.mark.parametrize(
    ("name", "waves"),
    [
        ("coding_tasks", "topic, task, style | request | solution | solution_parses, score"),
        ("summary_round_trip", "correlation_id, summary, source_lang, target_lang | "
         "translation | back_translation | round_trip"),
    ],
)  # fmt: skip
def test_check_says_each_shipped_example_is_ok(name: str, waves: str) -> None:
    ok = cli("recipe", "check", name)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip().endswith(f"recipe {name} is ok: 7 columns ({waves})")


def test_preview_prints_rows_and_a_run_reuses_them(tmp_path: Path, fast_slots: Path) -> None:
    path = write_recipe(tmp_path / "every", EVERY_COLUMN)
    env = _env(tmp_path, fast_slots)
    preview = cli("recipe", "preview", "every_column", "--file", str(path), "--rows", "2",
                  env=env)  # fmt: skip
    assert preview.returncode == 0, preview.stderr
    table = preview.stdout
    for column in ("query", "question", "answer", "facts_topic", "score_helpful", "causes"):
        assert column in table
    assert QUESTIONS[0] in table and QUESTIONS[2] not in table
    assert "recipe every_column (preview): 2 rows" in table
    run = cli("recipe", "run", "every_column", "--file", str(path), env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    meta = json.loads(run.stdout.strip().splitlines()[-1])
    # Two rows were previewed: their 4 LLM cells each come from the store.
    assert meta["rows"] == len(QUESTIONS)
    assert meta["cells_reused"] == 8 and meta["llm_cells_asked"] == 4 * (len(QUESTIONS) - 2)
    assert meta["llm_cells_unanswered"] == 0


def test_a_killed_run_run_again_asks_each_request_once(tmp_path: Path) -> None:
    many = [f"{q} (variant {i})" for i in range(5) for q in QUESTIONS]
    # No judge column: the judge slot's one place would make the run long, not the test better.
    recipe = dict(
        EVERY_COLUMN, columns=[c for c in EVERY_COLUMN["columns"] if c["name"] != "score"]
    )
    asked = 3 * len(many)  # two samples of answer, one of facts
    path = write_recipe(tmp_path / "kill", recipe, seeds=many)
    db = tmp_path / "data" / "recipes.duckdb"
    with slot_simulator_process(tmp_path / "sim", speed=4) as slots:
        # The cheap role's slot (facts, the second wave) answers nothing: the run is killed
        # with the first wave stored and the second in flight, whatever the machine's load,
        # not at whatever moment a poll of the file happens to see.
        set_faults(load_slot_file(slots).slots_for_role("cheap")[0], slowdown=10_000)
        proc = subprocess.Popen(
            [sys.executable, "-m", "model_foundry.cli", "recipe", "run", "every_column",
             "--file", str(path)],
            env=clean_env(**_env(tmp_path, slots)), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            answered = "SELECT count(*) FROM llm_completions WHERE status = 'ok'"
            first_wave = 2 * len(many)
            wait_for(lambda: count(db, answered) >= first_wave, 120, "the first wave", proc=proc)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            stop_process(proc)
    assert proc.returncode == -signal.SIGKILL
    stored = count(db, "SELECT count(*) FROM llm_completions WHERE status = 'ok'")
    assert stored < asked
    # Run again on servers without the stall (the stalled simulator would still be working
    # on the killed run's requests); the slots' models are the same, so are the keys.
    with slot_simulator_process(tmp_path / "sim2", speed=4) as slots:
        env = clean_env(**_env(tmp_path, slots))
        again = cli("recipe", "run", "every_column", "--file", str(path), env=env)
        assert again.returncode == 0, again.stderr[-3000:]
    meta = json.loads(again.stdout.strip().splitlines()[-1])
    assert meta["llm_cells_unanswered"] == 0
    # Every request answered once: none of those stored before the kill was sent again.
    assert count(db, "SELECT count(*) FROM (SELECT request_key FROM llm_completions "
                 "WHERE status = 'ok' GROUP BY 1 HAVING count(*) > 1)") == 0  # fmt: skip
    # What was paid for before the kill is taken as it is (from its cell, or from the
    # completions store when the cell was not written yet); only the rest is sent.
    assert meta["reused_from_store"] + meta["cells_reused"] == stored
    assert meta["sent"] == asked - stored
    assert count(db, "SELECT count(DISTINCT request_key) FROM llm_completions "
                 "WHERE status = 'ok'") == asked  # fmt: skip
    # Every cell once per version.
    assert count(db, "SELECT count(*) FROM (SELECT cell_key FROM dataset_recipe_cells "
                 "GROUP BY cell_key, version HAVING count(*) > 1)") == 0  # fmt: skip
    assert count(db, "SELECT count(*) FROM dataset_recipe_cells WHERE column_name = 'facts'") == (
        len(many)
    )


def test_the_shipped_example_runs_on_the_simulator(tmp_path: Path, fast_slots: Path) -> None:
    env = _env(tmp_path, fast_slots)
    db = Path(env["MODEL_FOUNDRY_DUCKDB"])
    with storage.connect(db) as con:
        for i, query in enumerate(QUESTIONS):
            con.execute(
                "INSERT INTO semantic_searches (event_id, correlation_id, occurred_at, query) "
                "VALUES (?, 's1', now(), ?)",
                [f"e{i}", query],
            )
    run = cli("recipe", "run", "search_questions", env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    meta = json.loads(run.stdout.strip().splitlines()[-1])
    assert meta["rows"] == len(QUESTIONS) and meta["llm_cells_unanswered"] == 0
    # answer, cheap_answer, facts and the pairwise score's two orders for each search.
    assert meta["llm_cells_asked"] == 5 * len(QUESTIONS)
    assert count(db, "SELECT count(*) FROM recipe_search_questions WHERE score_helpful_a >= 1 "
                 "AND score_winner IN ('answer', 'cheap_answer', 'tie') "
                 "AND facts_topic IS NOT NULL AND answer_length") == len(QUESTIONS)  # fmt: skip
