"""The shipped examples coding_tasks and summary_round_trip, materialized as their Dagster
assets (``materialize_recipe``) on the slot simulator with a real DuckDB file: cells stored,
the Python-parse and similarity checks holding back what they should."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib import storage
from model_foundry.lib.recipes.columns.validation import similarity
from model_foundry.lib.recipes.files import find_recipe
from model_foundry.materialize import materialize_recipe
from model_foundry_tests.recipe_helpers import insert_summaries, summary

pytestmark = pytest.mark.timeout(300)

SHORT = "The user asked how to compact a DuckDB file; the assistant suggested CHECKPOINT."
# Words apart, so that the simulator's answer (the words reversed) is no echo of it.
JAPANESE = "ユーザーは バックアップの 失敗について 尋ね アシスタントは 空き容量の 確認を 勧めました"
# Hundreds of words of distinct characters: the simulator answers with a text's last words
# only, so its round trip comes back with a small part of this summary.
LONG = " ".join(chr(0x4E00 + 3 * i) + chr(0x4E01 + 3 * i) + chr(0x4E02 + 3 * i)
                for i in range(400))  # fmt: skip


@pytest.fixture
def db(tmp_path: Path, fast_slots: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data" / "examples.duckdb"
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(path))
    monkeypatch.setenv("MODEL_FOUNDRY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MODEL_FOUNDRY_SLOTS", str(fast_slots))
    monkeypatch.setenv("MODEL_FOUNDRY_SLOT_LIMITER", "flock")
    monkeypatch.delenv("NATS_URL", raising=False)
    return path


def _run(name: str) -> dict[str, Any]:
    found = find_recipe(name)
    result = materialize_recipe(found.path, name)
    assert result.success
    done = result.asset_materializations_for_node(f"recipe_{name}")
    return {k: getattr(v, "value", v) for k, v in done[0].metadata.items()}


def _rows(db: Path, sql: str) -> list[dict[str, Any]]:
    with storage.connect(db, read_only=True) as con:
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def test_coding_tasks_stores_each_solution_and_holds_back_what_does_not_parse(
    db: Path, tmp_path: Path
) -> None:
    # The simulator answers with the prompt's words reversed, and English reversed is salad
    # (``the of``, ``the with``) that noise_stop_words holds back. This test is about storing
    # and checking the solutions, so its copy of the example skips that gate, as a recipe's
    # ``gates: {skip: [...]}`` lets a user do.
    shipped = find_recipe("coding_tasks").path.parent
    copy = shutil.copytree(shipped, tmp_path / "coding_tasks")
    spec = (copy / "defs.yaml").read_text()
    (copy / "defs.yaml").write_text(
        spec.replace("  rows: 20\n", "  rows: 20\n  gates: {skip: [noise_stop_words]}\n", 1)
    )
    result = materialize_recipe(copy / "defs.yaml", "coding_tasks")
    assert result.success
    done = result.asset_materializations_for_node("recipe_coding_tasks")
    meta = {k: getattr(v, "value", v) for k, v in done[0].metadata.items()}
    assert meta["rows"] == 20 and meta["llm_cells_unanswered"] == 0
    assert meta["cells_by_column"]["solution"] == {"ok": 20}
    assert meta["cells_by_column"]["score"] == {"ok": 20}
    rows = _rows(db, "SELECT * FROM recipe_coding_tasks ORDER BY row_index")
    assert len(rows) == 20 and len({r["task"] for r in rows}) == 20
    for r in rows:
        assert r["task"] in r["request"] and r["style"] in r["request"]
        for score in ("correct", "readable", "follows_request"):
            assert 1 <= r[f"score_{score}"] <= 5
        # The check agrees with a parse of the stored answer (the simulator's answers are
        # prose, so none parses); the row stays, with its cause.
        try:
            ast.parse(r["solution"])
            parses = True
        except SyntaxError:
            parses = False
        assert r["solution_parses"] is parses is False
        assert "solution_parses: Python that does not parse" in r["causes"]
    assert meta["rejected_by_cause"] == {"solution_parses: Python that does not parse": 20}
    stored = _rows(db, "SELECT column_name, count(*) AS n FROM dataset_recipe_cells "
                   "WHERE recipe = 'coding_tasks' GROUP BY 1 ORDER BY 1")  # fmt: skip
    assert {r["column_name"]: r["n"] for r in stored} == {
        c: 20 for c in ("request", "score", "solution", "solution_parses", "style", "task",
                        "topic")
    }  # fmt: skip


def test_summary_round_trip_compares_each_back_translation_with_its_summary(db: Path) -> None:
    insert_summaries(db, [
        summary("s1", "An older summary of the session.", chat_events=2),
        summary("s1", SHORT),
        summary("s2", JAPANESE, language="ja"),
        summary("s3", LONG, language="ja"),
        summary("s4", "held back by a gate", gate="echo"),
    ])  # fmt: skip
    meta = _run("summary_round_trip")
    # The newest summary of each session, none a gate held back.
    assert meta["rows"] == 3 and meta["llm_cells_unanswered"] == 0
    rows = {r["correlation_id"]: r for r in _rows(db, "SELECT * FROM recipe_summary_round_trip")}
    assert rows["s1"]["summary"] == SHORT
    assert (rows["s1"]["source_lang"], rows["s1"]["target_lang"]) == ("English", "Japanese")
    assert (rows["s2"]["source_lang"], rows["s2"]["target_lang"]) == ("Japanese", "English")
    for r in rows.values():
        assert r["translation"] and r["back_translation"]
        alike = similarity(r["back_translation"], r["summary"])
        assert r["round_trip"] is (alike >= 0.3)
    assert rows["s1"]["round_trip"] is True and rows["s2"]["round_trip"] is True
    assert rows["s3"]["round_trip"] is False and rows["s3"]["rejected"] is True
    assert meta["rejected_by_cause"] == {"round_trip: less similar to summary than 0.3": 1}
    # Each leg asked the chat role to translate, in the row's direction.
    sql = "SELECT request::VARCHAR AS request FROM llm_completions WHERE status = 'ok'"
    asked = [json.loads(r["request"])["messages"][0]["content"] for r in _rows(db, sql)]
    assert sum("Japanese text into English" in a for a in asked) == 3
    assert sum("English text into Japanese" in a for a in asked) == 3
