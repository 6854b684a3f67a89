"""An ``llm_text`` column with ``text:``: the translator role asked with the bare text, as the
pipeline's own translations ask it, on the slot simulator with a real DuckDB file. Its cells go
through the one LLM run and the cell keys like any LLM column's, pass the same gates (with the
script gate of a translation), and a rerun asks nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib import storage
from model_foundry_tests.recipe_helpers import generate, write_recipe
from model_foundry_tests.slot_fixtures import Slots, requests_served

pytestmark = pytest.mark.timeout(300)

TRANSLATED: dict[str, Any] = {
    "name": "translated",
    "seed": {"file": "seed.jsonl"},
    "columns": [
        {"name": "passage", "type": "seed"},
        {"name": "source", "type": "seed"},
        {"name": "target", "type": "seed"},
        {"name": "translation", "type": "llm_text", "role": "translator",
         "text": "{{ passage }}", "source_lang": "{{ source }}", "target_lang": "{{ target }}"},
        {"name": "shown", "type": "expression", "expr": "{{ target }}: {{ translation }}"},
    ],
}  # fmt: skip

# The simulator's translator hands the text back tagged with the target language, so what a
# gate says is known: a long text comes back word for word (echo), a short English one "into
# Japanese" comes back in Latin script (wrong_script), one in kana and kanji passes.
LONG = "The user asked how to compact a DuckDB file and the assistant suggested a checkpoint"
SHORT = "Good morning everyone"
KANA = "おはようございます 皆さん"
SEEDS = [
    {"passage": LONG, "source": "English", "target": "Japanese"},
    {"passage": SHORT, "source": "English", "target": "Japanese"},
    {"passage": KANA, "source": "English", "target": "Japanese"},
]


def _rows(db: Path, sql: str) -> list[dict[str, Any]]:
    with storage.connect(db, read_only=True) as con:
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def test_a_text_column_asks_the_translator_with_the_bare_text_once(
    tmp_path: Path, db_path: Path, fast_slots: Path
) -> None:
    folder = tmp_path / "recipe"
    write_recipe(folder, TRANSLATED)
    (folder / "seed.jsonl").write_text(
        "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in SEEDS), encoding="utf-8"
    )
    slots = Slots(fast_slots, tmp_path / "locks")
    served = requests_served(fast_slots)
    first = generate(folder, TRANSLATED, db_path, slots)
    assert first.rows == 3 and first.llm_cells_asked == 3 and first.llm_cells_unanswered == 0
    assert requests_served(fast_slots) == served + 3
    assert dict(first.rejected_by_cause) == {"translation: echo": 1,
                                             "translation: wrong_script": 1}  # fmt: skip

    rows = {r["passage"]: r for r in _rows(db_path, "SELECT * FROM recipe_translated")}
    # The translator slot's prompt format (plamo-translate) read the text and the languages.
    assert rows[KANA]["translation"] == f"[Japanese] {KANA}"
    assert rows[KANA]["shown"] == f"Japanese: [Japanese] {KANA}" and not rows[KANA]["rejected"]
    assert "translation: echo" in rows[LONG]["causes"] and rows[LONG]["shown"] is None
    assert "translation: wrong_script" in rows[SHORT]["causes"] and rows[SHORT]["rejected"]

    asked = _rows(db_path, "SELECT slot, params::VARCHAR AS params, request::VARCHAR AS request "
                  "FROM llm_completions WHERE status = 'ok'")  # fmt: skip
    assert {a["slot"] for a in asked} == {"translator"} and len(asked) == 3
    for a in asked:
        params, request = json.loads(a["params"]), json.loads(a["request"])
        assert (params["source_lang"], params["target_lang"]) == ("English", "Japanese")
        # The bare text, no chat turns: the same body the pipeline's translations send.
        assert request["text"] in {LONG, SHORT, KANA} and request.get("messages") is None

    # Exactly once: a rerun takes the three answers' cells it has, asks and writes nothing.
    served = requests_served(fast_slots)
    again = generate(folder, TRANSLATED, db_path, slots)
    assert (again.llm_cells_asked, again.cells_reused, again.cells_written) == (0, 3, 0)
    assert requests_served(fast_slots) == served

    # A changed language is a new request for that column only.
    changed = json.loads(json.dumps(TRANSLATED))
    changed["columns"][3]["target_lang"] = "English"
    third = generate(folder, changed, db_path, slots)
    assert third.llm_cells_asked == 3 and requests_served(fast_slots) == served + 3
