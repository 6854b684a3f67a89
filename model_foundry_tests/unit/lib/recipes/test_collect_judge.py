"""The collection's judge recipe on a real DuckDB file: which answers are compared, what the
judge reads, when its cell makes a pair or a tie, the judge slot of a profile, and the request
shape each runtime constrains the answer with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_foundry.lib import storage
from model_foundry.lib.datasets.preferences import pair_records, preference_figures
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.gates.verdict import VerdictError, parse_verdict
from model_foundry.lib.recipes.cells import write_cells
from model_foundry.lib.recipes.collect_judge import (
    CONVERSATION,
    VERDICT,
    judge_recipe,
    plan_comparisons,
)
from model_foundry.lib.recipes.columns.judge import JudgeColumn, pairwise_value
from model_foundry.lib.recipes.judged import write_judgements
from model_foundry.lib.recipes.llm_cells import cell_requests
from model_foundry.lib.slots.config import (
    JUDGE_ROLE,
    NoSlotForRoleError,
    parse_slot_file,
    write_slot_file,
)
from model_foundry.lib.slots.config import load_slot_file as load
from model_foundry.lib.slots.request import build_request
from model_foundry.lib.tables.datasets import DatasetSampleRow
from model_foundry.lib.tables.judgements import JudgementRow, comparison_id
from model_foundry.lib.tables.recipes import RecipeCellRow
from model_foundry_tests.slot_fixtures import shipped_slot_file

MESSAGES = json.dumps([{"role": "user", "content": "What is a zone map?"}])


def _sample(key: str, prompt: str, slot: str, response: str, **more: object) -> DatasetSampleRow:
    fields = dict(
        dataset="d", version="v", request_key=key, prompt_id=prompt, source="file", role=slot,
        sample_index=0, messages=MESSAGES, prompt="What is a zone map?", response=response,
        reasoning=None, slot=slot, model=f"model-{slot}", params="{}", prompt_tokens=5,
        completion_tokens=5, finish_reason="stop", is_empty=False, is_truncated=False,
        run_id=None,
    )  # fmt: skip
    fields.update(more)
    return DatasetSampleRow(**fields)  # type: ignore[arg-type]


def test_pairs_of_distinct_usable_answers_and_self_judgements_skipped(tmp_path: Path) -> None:
    db = tmp_path / "j.duckdb"
    write_samples(
        db,
        [
            _sample("k1", "p1", "naughty", "Min and max per row group."),
            _sample("k2", "p1", "kindergarten", "A summary of each block."),
            _sample("k3", "p1", "grandpa", "Per-block min/max statistics."),
            # The same text again, a truncated answer and a lone answer: nothing to compare.
            _sample("k4", "p1", "other", "Min and max per row group."),
            _sample("k5", "p1", "cut", "Min and", is_truncated=True),
            _sample("k6", "p2", "naughty", "Only one answer here."),
        ],
    )
    plan = plan_comparisons(db, "d", "v", "grandpa")
    # k1, k2, k3 differ: three pairs; the two with grandpa's own answer are skipped.
    assert (plan.prompts, plan.pairs, plan.self_skipped, plan.prompts_judged) == (2, 3, 2, 1)
    assert [(c.a.key, c.b.key) for c in plan.comparisons] == [("k1", "k2")]
    [row] = [c.row for c in plan.comparisons]
    assert row.row_id == comparison_id("k1", "k2")
    assert row.values["answer_a"] == "Min and max per row group."
    assert "[user]\nWhat is a zone map?" in row.values[CONVERSATION]
    # The same answers judged by another slot: nothing of grandpa's is skipped.
    assert plan_comparisons(db, "d", "v", "naughty").self_skipped == 2


def _judge_requests(a: str, b: str) -> list:
    recipe = judge_recipe("d")
    column = recipe.column(VERDICT)
    values = {CONVERSATION: "[user]\nq", "answer_a": a, "answer_b": b}
    return cell_requests(recipe, column, "row", 0, values)  # type: ignore[arg-type]


def test_the_judge_reads_the_answers_in_both_orders() -> None:
    one, two = _judge_requests("first answer text", "second answer text")
    text_one = one.body.messages[-1]["content"]
    text_two = two.body.messages[-1]["content"]
    assert text_one.index("first answer") < text_one.index("second answer")
    assert text_two.index("second answer") < text_two.index("first answer")
    schema = judge_recipe("d").column(VERDICT).schema()  # type: ignore[attr-defined]
    assert one.role == JUDGE_ROLE and one.params["json_schema"] == schema
    assert set(schema["properties"]) == {"quality_1", "quality_2", "reason"}


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        ("ybq trs ahy", "not JSON"),
        ('```json\n{"score_1": 3}```', "not JSON"),
        ("[1, 2]", "not an object"),
        ('{"score_1": 3, "reason": "x"}', "no integer score_2"),
        ('{"score_1": 11, "score_2": 3, "reason": "x"}', "outside 1-10"),
        ('{"score_1": true, "score_2": 3, "reason": "x"}', "no integer score_1"),
        ('{"score_1": 2, "score_2": 3}', "no reason"),
    ],
)
def test_an_answer_that_is_not_a_verdict_says_why(content: str, cause: str) -> None:
    with pytest.raises(VerdictError, match=cause):
        parse_verdict(content)


def test_a_verdict_parses() -> None:
    assert parse_verdict('{"score_1": 7, "score_2": 2, "reason": "it is right"}') == (
        7,
        2,
        "it is right",
    )


_SCORES = {"a": (8, 3), "b": (3, 8), "tie": (5, 5), None: (None, None)}


def _judgement(first: str, winner: str | None, key: str) -> JudgementRow:
    score_a, score_b = _SCORES[winner]
    fields = dict(
        dataset="d", version="v", prompt_id="p1", language="en", answer_a="k1", answer_b="k2",
        first=first, model_a="model-naughty", model_b="model-kindergarten", slot_a="naughty",
        slot_b="kindergarten", request_key=key, judge_slot="grandpa", judge_model="glm",
        status="ok" if winner else "unparsed", score_a=score_a, score_b=score_b,
        winner=winner, reason="r" if winner else None, cause=None if winner else "not JSON",
        run_id=None,
    )  # fmt: skip
    return JudgementRow(**fields)  # type: ignore[arg-type]


def _verdict(first: str, winner: str | None) -> dict | None:
    """One order's verdict as the judge column reads it: the answer read first scored first."""
    score_a, score_b = _SCORES[winner]
    if winner is None:
        return None
    one, two = (score_a, score_b) if first == "a" else (score_b, score_a)
    return {"quality_1": one, "quality_2": two, "reason": "r"}


def _cell(first: str | None, second: str | None) -> RecipeCellRow:
    """The judge recipe's cell of comparison k1-k2, as the generator stores it."""
    column = judge_recipe("d").column(VERDICT)
    assert isinstance(column, JudgeColumn)
    verdicts = {"ab": _verdict("a", first), "ba": _verdict("b", second)}
    held = None in verdicts.values()
    value = verdicts if held else pairwise_value(column, verdicts)
    return RecipeCellRow(
        recipe="judge_d", version="v", cell_key="c1", row_id=comparison_id("k1", "k2"),
        row_index=0, column_name=VERDICT, column_type="llm_judge", sample_index=0,
        value=json.dumps(value), status="rejected" if held else "ok",
        cause="unparsed" if held else None, request_key="j1", slot="grandpa", model="glm",
        prompt_tokens=None, completion_tokens=None, run_id=None,
    )  # fmt: skip


def _figures_for(tmp_path: Path, first: str | None, second: str | None):
    db = tmp_path / "p.duckdb"
    write_samples(
        db,
        [
            _sample("k1", "p1", "naughty", "Min and max per row group."),
            _sample("k2", "p1", "kindergarten", "A summary of each block."),
        ],
    )
    assert write_judgements(db, [_judgement("a", first, "j1")]) == 1
    assert write_judgements(db, [_judgement("b", second, "j2")]) == 1
    # The same ask written again (a rerun, or under another request key) is not a second row.
    assert write_judgements(db, [_judgement("b", second, "j3")]) == 0
    assert write_cells(db, [_cell(first, second)]) == 1
    return db, preference_figures(db, "d", "v")


def test_both_orders_agreeing_make_a_pair(tmp_path: Path) -> None:
    db, figures = _figures_for(tmp_path, "a", "a")
    assert (figures.pairs, figures.ties, figures.agreement_rate) == (1, 0, 1.0)
    [pair] = pair_records(db, "d", "v", {"p1": "test"})
    assert pair["chosen"] == [{"role": "assistant", "content": "Min and max per row group."}]
    assert pair["model_chosen"] == "model-naughty" and pair["split"] == "test"
    assert (pair["score_chosen"], pair["score_rejected"]) == (8.0, 3.0)
    with storage.connect(db) as con:
        rows = con.execute(
            "SELECT model, wins, losses, ties, win_rate FROM model_preferences ORDER BY model"
        ).fetchall()
    assert rows == [("model-kindergarten", 0, 1, 0, 0.0), ("model-naughty", 1, 0, 0, 1.0)]


@pytest.mark.parametrize(("first", "second"), [("a", "b"), ("tie", "tie"), ("a", "tie")])
def test_swapped_orders_that_disagree_are_a_tie(tmp_path: Path, first: str, second: str) -> None:
    db, figures = _figures_for(tmp_path, first, second)
    assert (figures.pairs, figures.ties, figures.both_parsed) == (0, 1, 1)
    assert figures.agreement_rate == 0.0
    assert list(pair_records(db, "d", "v", {"p1": "train"})) == []
    with storage.connect(db) as con:
        ties = con.execute("SELECT sum(ties), sum(wins) FROM model_preferences").fetchone()
    assert ties == (2, 0)  # one tie, seen from each side


def test_an_unparsed_order_is_neither_pair_nor_tie(tmp_path: Path) -> None:
    _, figures = _figures_for(tmp_path, "a", None)
    assert (figures.pairs, figures.ties, figures.with_unparsed) == (0, 0, 1)
    assert figures.agreement_rate is None


def test_the_judge_slot_of_a_profile(tmp_path: Path) -> None:
    sf = shipped_slot_file()
    # The standard profile leaves grandpa out of its fan-out; grandpa judges it anyway.
    assert "grandpa" not in [s.name for s in sf.live_slots("standard")]
    judging, profile = sf.for_judging("standard")
    assert [s.name for s in judging.slots_for_role(JUDGE_ROLE, profile)] == ["grandpa"]
    # grandpa's own role falls back to naughty; the judge role never does.
    assert judging.roles[JUDGE_ROLE].fallbacks == []
    # grandpa thinks, but llama.cpp's grammar would constrain the reasoning too: the judge
    # does not think unless roles.judge says so.
    assert (
        sf.roles["grandpa"].thinking is True
        and not sf.slots["grandpa"].server.schema_after_reasoning
    )
    assert judging.roles[JUDGE_ROLE].thinking is False
    asked = sf.to_yaml_dict()
    asked["roles"]["judge"] = {"thinking": True}
    judging, _ = parse_slot_file(asked, "t.yaml").for_judging("standard")
    assert judging.roles[JUDGE_ROLE].thinking is True
    data = sf.to_yaml_dict()
    data["profiles"]["standard"] = {"slots": data["profiles"]["standard"], "judge": "naughty"}
    named = parse_slot_file(data, "named.yaml")
    assert named.judge_slot("standard").name == "naughty"
    assert load(write_slot_file(named, tmp_path / "s.yaml")).judges == {"standard": "naughty"}
    del data["slots"]["grandpa"], data["roles"]["grandpa"], data["roles"]["reasoning"]
    data["profiles"] = {"standard": ["naughty", "kindergarten"]}
    data["default_profile"] = "standard"
    bare = parse_slot_file(data, "bare.yaml")
    with pytest.raises(NoSlotForRoleError, match="no judge slot: name one with"):
        bare.for_judging("standard")


def test_a_profile_judge_must_be_a_slot() -> None:
    data = shipped_slot_file().to_yaml_dict()
    data["profiles"]["standard"] = {"slots": ["naughty"], "judge": "nobody"}
    with pytest.raises(ValueError, match=r"x.yaml: profiles.standard.judge: unknown slot"):
        parse_slot_file(data, "x.yaml")
    data["profiles"]["standard"] = {"slots": ["naughty"], "jduge": "naughty"}
    with pytest.raises(ValueError, match=r"profiles.standard.jduge: unknown field"):
        parse_slot_file(data, "x.yaml")


def test_each_runtime_constrains_the_judge_in_its_own_shape() -> None:
    sf = shipped_slot_file()
    body = _judge_requests("x", "y")[0].body
    schema = judge_recipe("d").column(VERDICT).schema()  # type: ignore[attr-defined]
    params = {"json_schema": dict(schema)}
    llama = build_request(sf.slots["grandpa"], body, params)
    assert llama["response_format"]["json_schema"]["schema"] == schema
    assert "json_schema" not in llama.get("extra_body", {})
    vllm = build_request(sf.slots["naughty"], body, params)
    assert vllm["extra_body"]["structured_outputs"] == {"json": schema}
    assert "response_format" not in vllm and "json_schema" not in vllm["extra_body"]
    # The simulator reads the schema back through the same runtime objects.
    assert sf.slots["grandpa"].server.requested_schema(llama) == schema
    assert sf.slots["naughty"].server.requested_schema(vllm["extra_body"]) == schema
