"""A recipe's rows as export records: typed columns and sub-columns, the chat column's
conversation, why a row is held back, what near duplicates are compared on, the scrub of
every text a row holds and the card's recipe section."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from model_foundry.lib.exports.card import CardSections, ExportFigures, card_text
from model_foundry.lib.exports.hygiene import ExportHygiene
from model_foundry.lib.exports.published import ExportOutcome
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.recipes.card import recipe_section
from model_foundry.lib.recipes.export import RecipeHygiene, nothing_kept_warning, recipe_layout
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.recipes.records import (
    INCOMPLETE,
    NewestCell,
    chat_column,
    check_exportable,
    column_fields,
    held_back,
    row_record,
    row_text,
)
from model_foundry.lib.recipes.spec import RecipeError
from model_foundry_tests.recipe_helpers import EVERY_COLUMN, PAIRWISE


def _recipe(attributes: dict[str, Any] = EVERY_COLUMN):
    return parse_recipe(copy.deepcopy(attributes), "r/defs.yaml")


def _cells(**overrides: NewestCell | None) -> dict[str, NewestCell]:
    cells = {
        "query": NewestCell("how do I compact a file", "ok", None),
        "tone": NewestCell("formal", "ok", None),
        "budget": NewestCell(120, "ok", None),
        "question": NewestCell("In a formal tone: how do I compact a file?", "ok", None),
        "answer": NewestCell("Run CHECKPOINT.", "ok", None, "naughty", "m-worker", 10, 3),
        "facts": NewestCell({"topic": "duckdb", "level": 2}, "ok", None, "kindergarten",
                            "m-cheap", 7, 5),
        "score": NewestCell({"helpful": 4, "reason": "short"}, "ok", None, "grandpa", "m-judge",
                            20, 9),
        "is_python": NewestCell(True, "ok", None),
        "long_enough": NewestCell(True, "ok", None),
    }  # fmt: skip
    for name, cell in overrides.items():
        if cell is None:
            del cells[name]
        else:
            cells[name] = cell
    return cells


def test_columns_are_typed_as_in_the_recipe_view() -> None:
    fields = dict(column_fields(_recipe()))
    assert fields["budget"] == pa.int64()
    assert fields["tone"] == fields["answer"] == fields["facts"] == pa.string()
    assert fields["facts_topic"] == pa.string() and fields["facts_level"] == pa.int64()
    assert fields["score_helpful"] == pa.int64() and fields["score_reason"] == pa.string()
    assert fields["is_python"] == pa.bool_()
    layout = recipe_layout(_recipe())
    assert layout.config == "rows"
    assert [f.name for f in layout.schema][-2:] == ["cluster_id", "split"]
    assert [n for n, _ in layout.audit] == ["gate", "causes"]


def test_a_column_named_as_an_export_field_is_refused_in_one_sentence() -> None:
    attributes = {"name": "r", "rows": 1, "columns": [
        {"name": "split", "type": "sampler", "sampler": "choice", "values": ["a"]}]}  # fmt: skip
    with pytest.raises(RecipeError) as caught:
        check_exportable(_recipe(attributes))
    assert str(caught.value).startswith(
        "r/defs.yaml: columns.split: the name 'split' is one of the export's own fields"
    )
    check_exportable(_recipe())


def test_the_chat_is_the_last_text_column_else_the_last_llm_column() -> None:
    assert chat_column(_recipe()).name == "answer"  # type: ignore[union-attr]
    structured = copy.deepcopy(EVERY_COLUMN)
    dropped = ("answer", "is_python", "long_enough")
    structured["columns"] = [c for c in structured["columns"] if c["name"] not in dropped]
    for c in structured["columns"]:
        if c["name"] in ("facts", "score"):
            c["prompt"] = "About {{ question }}"
    assert chat_column(_recipe(structured)).name == "score"  # type: ignore[union-attr]
    plain = {"name": "r", "rows": 1, "columns": [
        {"name": "a", "type": "sampler", "sampler": "choice", "values": ["x"]}]}  # fmt: skip
    assert chat_column(_recipe(plain)) is None


def test_a_kept_row_has_typed_values_its_chat_and_its_lineage() -> None:
    recipe = _recipe()
    record = row_record(recipe, "r1", 4, _cells(), chat_column(recipe))
    assert record["id"] == "r1" and record["row_index"] == 4 and record["version"] == "run"
    assert record["budget"] == 120 and record["is_python"] is True
    assert record["facts"] == '{"topic": "duckdb", "level": 2}'
    assert record["facts_topic"] == "duckdb" and record["facts_level"] == 2
    assert record["score_helpful"] == 4 and record["score_reason"] == "short"
    assert [(m["role"], m["content"]) for m in record["messages"]] == [
        ("system", "Answer briefly."),
        ("user", "In a formal tone: how do I compact a file?"),
        ("assistant", "Run CHECKPOINT."),
    ]
    assert (record["messages"][2]["slot"], record["messages"][2]["model"]) == (
        "naughty", "m-worker",
    )  # fmt: skip
    assert record["slots"] == ["grandpa", "kindergarten", "naughty"]
    assert record["models"] == ["m-cheap", "m-judge", "m-worker"]
    assert (record["prompt_tokens"], record["completion_tokens"]) == (37, 17)
    assert record["gate"] is None and record["causes"] is None
    # Every field of the layout is there, and Arrow takes the record as the schema says.
    layout = recipe_layout(recipe)
    table = pa.Table.from_pylist([{**record, "cluster_id": "r1", "split": "train"}],
                                 schema=layout.spooled)  # fmt: skip
    assert table.num_rows == 1


def test_a_value_of_the_wrong_type_is_none_not_a_crash() -> None:
    recipe = _recipe()
    unparsed = NewestCell("not json", "rejected", "unparsed")
    record = row_record(recipe, "r1", 0, _cells(facts=unparsed), chat_column(recipe))
    assert record["facts"] == "not json" and record["facts_level"] is None
    level_text = NewestCell({"topic": "x", "level": "two"}, "ok", None)
    record = row_record(recipe, "r1", 0, _cells(facts=level_text), chat_column(recipe))
    assert record["facts_level"] is None


def test_a_row_is_held_back_by_its_first_rejected_column_or_as_incomplete() -> None:
    recipe = _recipe()
    assert held_back(recipe, _cells()) == (None, None)
    python = NewestCell(False, "rejected", "Python that does not parse (invalid syntax)")
    gate, causes = held_back(recipe, _cells(is_python=python, answer=NewestCell("", "rejected",
                                                                          "empty")))  # fmt: skip
    assert gate == "answer"
    assert causes == "answer: empty; is_python: Python that does not parse (invalid syntax)"
    gate, causes = held_back(recipe, _cells(score=None))
    assert gate == INCOMPLETE and causes == "score: no cell yet"
    # A rejected answer's readers were never asked: the rejection names the row, not them.
    gate, _ = held_back(recipe, _cells(answer=NewestCell("x", "rejected", "cut_off"), score=None))
    assert gate == "answer"
    record = row_record(recipe, "r", 0, _cells(answer=NewestCell("x", "rejected", "cut_off")),
                        chat_column(recipe))  # fmt: skip
    assert record["gate"] == "answer" and record["messages"] == []


def test_near_duplicates_are_compared_on_every_text_column() -> None:
    recipe = _recipe()
    record = row_record(recipe, "r1", 0, _cells(), chat_column(recipe))
    text = row_text(recipe, record).splitlines()
    assert text[0] == "how do I compact a file" and "Run CHECKPOINT." in text
    assert '{"topic": "duckdb", "level": 2}' in text
    assert "120" not in text and "True" not in text


def test_every_text_a_row_holds_is_scrubbed_and_the_rest_left_alone(tmp_path: Path) -> None:
    recipe = _recipe()
    token = "ghp_" + "Zq8vT2mK9xR4wL7nB3cY6hJ1pF5sD0aG8eUi"
    cells = _cells(query=NewestCell(f"push with {token}", "ok", None),
                   facts=NewestCell({"topic": token, "level": 2}, "ok", None))  # fmt: skip
    record = row_record(recipe, "r1", 0, cells, chat_column(recipe))
    record["causes"] = f"long_enough: does not match {token}"
    text_fields = [n for n, t in column_fields(recipe) if t == pa.string()]
    inner = ExportHygiene(tmp_path / "f.duckdb", "r", RecordScrubber(), test_share=0.5)
    clean, counts = RecipeHygiene(inner, text_fields).scrub(record)
    assert token not in repr(clean) and token in repr(record)
    assert sum(counts.values()) == 4  # query, facts, facts_topic, causes
    assert clean["facts_topic"].startswith("[REDACTED:")
    assert clean["id"] == "r1" and clean["budget"] == 120 and clean["slots"] == record["slots"]


def test_the_card_holds_the_recipe_and_a_line_per_column() -> None:
    recipe = _recipe()
    figures = ExportFigures(
        dataset="every_column", version="v1", kind="rows", rows_by_split={"train": 3},
        records=4, sessions=4, models=["m"], slots=["naughty"], redactions_by_kind={},
        duplicates_removed=0, clusters=4, removed_by_filter={}, split_joins=0,
        license="unknown", languages=["en"], held_back_by_gate={"is_python": 1, "answer": 0},
        recipe={
            "name": "every_column", "cells_version": "run", "chat_column": "answer",
            "recipe": {"name": "every_column", **dict(recipe.raw)},
            "columns": {"answer": {"type": "llm_text", "role": "worker", "slots": ["naughty"],
                                   "models": ["m"], "prompt_tokens": 40, "completion_tokens": 12,
                                   "ok": 4, "rejected": 0, "rejected_by_cause": {}},
                        "is_python": {"type": "validation", "role": None, "slots": [],
                                      "models": [], "prompt_tokens": 0, "completion_tokens": 0,
                                      "ok": 3, "rejected": 1,
                                      "rejected_by_cause": {"Python that does not parse": 1}}},
        },
    )  # fmt: skip
    card = card_text(recipe_layout(recipe), figures, CardSections(sections=[recipe_section]))
    assert "Dataset recipe rows exported" in card and "Seed rows: 4" in card
    assert "| answer | llm_text | worker | naughty | m | 40 | 12 | 4 | 0 | none |" in card
    python = "| is_python | validation | - | - | - | 0 | 0 | 3 | 1 | Python that does not parse: 1"
    assert python in card
    assert "prompt: '{{ question }}'" in card
    assert "Rows held back, by the column that held them: answer: 0, is_python: 1." in card
    # The generic line on answers held back by cause is the samples' wording, not a recipe's.
    assert "Answers held back by the quality gates" not in card


def test_an_export_that_kept_no_row_says_so() -> None:
    def outcome(rows_by_split: dict[str, int], records: int) -> ExportOutcome:
        figures = ExportFigures(
            dataset="r", version="v1", kind="rows", rows_by_split=rows_by_split,
            records=records, sessions=0, models=[], slots=[], redactions_by_kind={},
            duplicates_removed=1, clusters=2, removed_by_filter={}, split_joins=0,
            license="unknown", languages=[], held_back_by_gate={"answer": 2, "score": 0},
        )  # fmt: skip
        return ExportOutcome(Path("/x"), figures, "seed row")

    assert nothing_kept_warning(outcome({"train": 0, "test": 0}, 3)) == (
        "no row of recipe r was kept: all 3 are only in samples.parquet (held back by "
        "column: answer: 2; duplicates: 1)"
    )
    assert nothing_kept_warning(outcome({"train": 1, "test": 0}, 3)) is None
    assert nothing_kept_warning(outcome({}, 0)) is None


def test_a_pairwise_judge_exports_its_winner_agreement_and_scores_typed() -> None:
    recipe = _recipe(PAIRWISE)
    fields = dict(column_fields(recipe))
    assert fields["preference"] == fields["preference_winner"] == pa.string()
    assert fields["preference_agree"] == pa.bool_()
    assert fields["preference_helpful_a"] == fields["preference_clear_b"] == pa.float64()
    value = {"winner": "answer", "agree": True, "helpful_a": 8.5, "helpful_b": 4.5,
             "clear_a": 3.5, "clear_b": 3.0, "verdict_ab": {}, "verdict_ba": {}}  # fmt: skip
    cells = {
        "query": NewestCell("q", "ok", None),
        "answer": NewestCell("Run CHECKPOINT.", "ok", None),
        "cheap_answer": NewestCell("Copy it.", "ok", None),
        "preference": NewestCell(value, "ok", None, "grandpa", "m-judge", 40, 18),
    }
    record = row_record(recipe, "r1", 0, cells, chat_column(recipe))
    assert record["preference_winner"] == "answer" and record["preference_agree"] is True
    assert record["preference_helpful_a"] == 8.5 and record["preference_clear_b"] == 3.0
    assert '"winner": "answer"' in record["preference"]
    assert record["gate"] is None


def test_a_text_columns_chat_is_its_bare_text_and_the_answer() -> None:
    raw = copy.deepcopy(EVERY_COLUMN)
    raw["columns"] = [c for c in raw["columns"] if c["name"] in ("query", "tone", "question")]
    raw["columns"].append({"name": "translation", "type": "llm_text", "role": "translator",
                           "text": "{{ question }}", "target_lang": "Japanese"})  # fmt: skip
    recipe = _recipe(raw)
    cells = {k: v for k, v in _cells().items() if k in ("query", "tone", "question")}
    cells["translation"] = NewestCell("[Japanese] ...", "ok", None, "translator", "plamo", 8, 4)
    record = row_record(recipe, "r1", 0, cells, chat_column(recipe))
    turns = [(m["role"], m["content"]) for m in record["messages"]]
    assert turns == [("user", "In a formal tone: how do I compact a file?"),
                     ("assistant", "[Japanese] ...")]  # fmt: skip
    assert record["slots"] == ["translator"] and record["gate"] is None
