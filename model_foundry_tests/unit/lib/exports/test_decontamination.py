"""Exports checked against the lab's eval sets: planted items held back however they are
dressed, rows that only share topic words kept, a bad eval-sets file refused before any
file is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from model_foundry.lib.datasets.sample_export import export_samples
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.decontamination.config import EvalSetError
from model_foundry.lib.exports.frame import Preparation, export_records
from model_foundry.lib.exports.hygiene import ExportHygiene
from model_foundry.lib.exports.layouts import SESSIONS
from model_foundry.lib.exports.published import ExportTarget
from model_foundry.lib.gates.config import CAUSES, GateConfig
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.tables.datasets import DatasetSampleRow

RUNS = {
    "task_id": "Mine/0",
    "prompt": (
        'def longest_run(values: list[int]) -> int:\n    """Return the length of the longest '
        "run of equal neighbours in the list; an empty list has no run, so the answer is "
        'zero.\n    >>> longest_run([4, 4, 1, 1, 1])\n    3\n    """\n'
    ),
    "canonical_solution": (
        "    best = run = 0\n    last = None\n    for v in values:\n        run = run + 1 if "
        "v == last else 1\n        last = v\n        best = max(best, run)\n    return best\n"
    ),
}
VOWELS = {
    "task_id": "Mine/1",
    "prompt": (
        'def vowel_groups(word: str) -> int:\n    """Count the groups of vowels standing '
        'next to each other in the word, with no consonant between them.\n    """\n'
    ),
    "canonical_solution": "    return len(re.findall('[aeiou]+', word.lower()))\n",
}
RIVER = {
    "task_id": "Mine/ja",
    "prompt": "日本で一番長い川は何という名前で、どの県を流れて日本海に注いでいますか。",
    "canonical_solution": "信濃川です。長野県では千曲川と呼ばれ、新潟県を流れて日本海に注ぎます。",
}

HELD = {
    "verbatim": RUNS["prompt"] + RUNS["canonical_solution"],
    "recased": RUNS["prompt"].upper(),
    "respaced": "  ".join(RUNS["prompt"].split()),
    "embedded": f"Sure! I found this exercise online:\n\n```python\n{VOWELS['prompt']}```\n"
    "Let me know if you want me to solve it step by step, with tests.",
    "japanese": f"次の問題を解いてください。{RIVER['prompt']}よろしくお願いします。",
    "japanese_spaced": " ".join(RIVER["prompt"]),
}
KEPT = {
    "topic_runs": "The longest run of equal values in a list is easy: keep a counter and "
    "reset it whenever the value changes.",
    "topic_vowels": "Vowels are a, e, i, o and u; counting groups of them is a classic "
    "exercise on regular expressions.",
    "topic_river": "信濃川は日本一長い川として知られ、新潟平野の米作りを支えています。",
    # Half of the question's first sentence: a few 13-grams, under the threshold.
    "partial": "Return the length of the longest run of equal neighbours in the list; an "
    "empty list is mine.",
}


def _eval_sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "evals").mkdir()
    lines = [json.dumps(i, ensure_ascii=False) for i in (RUNS, VOWELS, RIVER)]
    (tmp_path / "evals" / "mine.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = tmp_path / "eval_sets.yaml"
    config.write_text(
        "eval_sets:\n  mine:\n    path: evals/mine.jsonl\n    id: task_id\n"
        "    text: [prompt, canonical_solution]\n"
    )
    monkeypatch.setenv("MODEL_FOUNDRY_EVAL_SETS", str(config))


def _sample(name: str, answer: str) -> DatasetSampleRow:
    question = f"Please answer question {name}."
    return DatasetSampleRow(
        dataset="planted", version="v1", request_key=name, prompt_id=f"p-{name}",
        source="test", role="writer", sample_index=0,
        messages=json.dumps([{"role": "user", "content": question}]), prompt=question,
        response=answer, reasoning=None, slot="s", model="m", params="{}", prompt_tokens=10,
        completion_tokens=10, finish_reason="stop", is_empty=False, is_truncated=False,
        run_id=None,
    )  # fmt: skip


def _export_samples(tmp_path: Path) -> Path:
    db = tmp_path / "f.duckdb"
    write_samples(db, [_sample(n, t) for n, t in {**HELD, **KEPT}.items()])
    hygiene = ExportHygiene(db, "planted", RecordScrubber(), test_share=0.5)
    target = ExportTarget(tmp_path / "datasets", "planted", "v1")
    # Every gate off: what is held back here is held back by the eval sets alone.
    return export_samples(db, target, hygiene, gates=GateConfig(skip=frozenset(CAUSES))).path


def test_planted_items_are_held_back_and_topic_rows_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _eval_sets(tmp_path, monkeypatch)
    folder = _export_samples(tmp_path)
    rows = {r["id"]: r for r in pq.read_table(folder / "samples.parquet").to_pylist()}
    expected_item = {
        "verbatim": "Mine/0", "recased": "Mine/0", "respaced": "Mine/0",
        "embedded": "Mine/1", "japanese": "Mine/ja", "japanese_spaced": "Mine/ja",
    }  # fmt: skip
    for name, item in expected_item.items():
        row = rows[name]
        assert (row["kept"], row["dropped_by"]) == (False, "contaminated"), name
        found = row["contamination"]
        assert found["eval_set"] == "mine" and found["item_id"] == item, name
        assert found["score"] >= 0.5 and found["span"], name
    for name in KEPT:
        assert rows[name]["kept"] and rows[name]["dropped_by"] is None, name
    assert all(rows[n]["contamination"] is None for n in ("topic_runs", "topic_vowels"))
    assert rows["topic_river"]["contamination"] is None
    partial = rows["partial"]["contamination"]
    assert partial["item_id"] == "Mine/0" and 0 < partial["score"] < 0.5
    kept_ids = pq.read_table(folder / "hf" / "samples").column("id").to_pylist()
    assert sorted(kept_ids) == sorted(KEPT)
    openai = "".join(p.read_text() for p in (folder / "openai").glob("*.jsonl"))
    assert "longest_run" not in openai and "日本で一番長い川" not in openai


def test_session_exports_check_every_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db_path: Path
) -> None:
    _eval_sets(tmp_path, monkeypatch)

    def session(sid: str, *turns: str) -> dict[str, Any]:
        messages = [{"role": "system", "content": "be brief"}] + [
            {"role": ("user", "assistant")[n % 2], "content": t} for n, t in enumerate(turns)
        ]
        return {"id": f"{sid}/main", "correlation_id": sid, "thread": "main", "part": 0,
                "messages": messages, "tools": "[]", "turns": len(turns)}  # fmt: skip

    records = [
        session("clean", "How do I count vowels?", KEPT["topic_vowels"]),
        session("tool", "Solve this", "I searched for it.", "ok", HELD["verbatim"]),
        session("sys", "hi", "hello"),
    ]
    records[2]["messages"][0]["content"] = HELD["japanese"]
    hygiene = ExportHygiene(db_path, "agents", RecordScrubber(), test_share=0.5)
    target = ExportTarget(tmp_path / "datasets", "agents", "v1")
    outcome = export_records(
        db_path, target, SESSIONS, records, hygiene,
        Preparation(group_of=lambda r: r["correlation_id"], filters=()), {"run": "test"},
    )  # fmt: skip
    rows = pq.read_table(outcome.path / "samples.parquet").to_pylist()
    got = {r["correlation_id"]: (r["dropped_by"], (r["contamination"] or {}).get("item_id"))
           for r in rows}  # fmt: skip
    assert got == {
        "clean": (None, None),
        "tool": ("contaminated", "Mine/0"),
        "sys": ("contaminated", "Mine/ja"),
    }


def test_a_missing_field_refuses_the_export_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _eval_sets(tmp_path, monkeypatch)
    config = tmp_path / "eval_sets.yaml"
    config.write_text(config.read_text().replace("canonical_solution", "answer"))
    with pytest.raises(EvalSetError) as caught:
        _export_samples(tmp_path)
    message = str(caught.value)
    assert "mine.jsonl" in message and "'answer'" in message and str(config) in message
    assert not (tmp_path / "datasets" / "planted" / "v1").exists()
    assert not list((tmp_path / "datasets").rglob("*.parquet"))


def test_without_eval_sets_nothing_is_checked(tmp_path: Path) -> None:
    folder = _export_samples(tmp_path)
    rows = pq.read_table(folder / "samples.parquet").to_pylist()
    assert all(r["kept"] and r["contamination"] is None for r in rows)


def test_the_card_and_manifest_say_what_was_checked_and_held_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _eval_sets(tmp_path, monkeypatch)
    folder = _export_samples(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    found = manifest["decontamination"]
    assert found["file"] == "eval_sets.yaml" and found["ngram"] == 13
    mine = found["eval_sets"]["mine"]
    rows = len(HELD) + len(KEPT)
    assert (mine["items"], mine["rows_checked"], mine["rows_held_back"]) == (3, rows, 6)
    assert mine["rows_under_threshold"] == 1
    assert mine["items_hit_most"] == [
        {"item_id": "Mine/0", "rows": 3},
        {"item_id": "Mine/ja", "rows": 2},
        {"item_id": "Mine/1", "rows": 1},
    ]
    card = (folder / "README.md").read_text()
    section = card.split("## Evaluation sets")[1].split("## How it was made")[0]
    assert f"| mine | 3 | {rows} | 6 | 1 | Mine/0 (3), Mine/ja (2), Mine/1 (1) |" in section
    assert "`eval_sets.yaml`" in section and str(tmp_path) not in card


def test_an_export_without_eval_sets_says_not_checked(tmp_path: Path) -> None:
    folder = _export_samples(tmp_path)
    card = (folder / "README.md").read_text()
    assert "## Evaluation sets\n\nNot checked" in card
    assert json.loads((folder / "manifest.json").read_text())["decontamination"] is None
