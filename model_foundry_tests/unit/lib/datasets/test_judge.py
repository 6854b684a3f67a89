"""The judge's pieces on a real DuckDB file: which answers are compared, how a verdict is
read, when two orders make a pair or a tie, the judge slot of a profile, and the request
shape each runtime constrains the answer with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_foundry.lib import storage
from model_foundry.lib.datasets.judge import (
    Comparison,
    Judgements,
    Sampled,
    plan_comparisons,
    verdict_params,
    write_judgements,
)
from model_foundry.lib.datasets.preferences import pair_records, preference_figures
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.gates.verdict import (
    VERDICT_MAX_TOKENS,
    VERDICT_SCHEMA,
    VerdictError,
    parse_verdict,
)
from model_foundry.lib.llm.request import output_params, request_key
from model_foundry.lib.slots.config import (
    JUDGE_ROLE,
    NoSlotForRoleError,
    parse_slot_file,
    write_slot_file,
)
from model_foundry.lib.slots.config import load_slot_file as load
from model_foundry.lib.slots.request import build_request
from model_foundry.lib.tables.datasets import DatasetSampleRow
from model_foundry.lib.tables.judgements import JudgementRow
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
    asks = [(c.a.key, c.b.key, c.first) for c in plan.comparisons]
    assert asks == [("k1", "k2", "a"), ("k1", "k2", "b")]
    # The same answers judged by another slot: nothing of grandpa's is skipped.
    assert plan_comparisons(db, "d", "v", "naughty").self_skipped == 2


def test_comparisons_reading_the_same_answer_first_are_asked_one_after_another(
    tmp_path: Path,
) -> None:
    db = tmp_path / "j.duckdb"
    answers = ("Min and max per row group.", "A summary of each block.", "Block statistics.")
    write_samples(db, [_sample(f"k{n}", "p1", f"s{n}", text) for n, text in enumerate(answers, 1)])
    # A judge slot that answered none of them: 3 pairs, both orders each.
    grouped = plan_comparisons(db, "d", "v", "grandpa").comparisons
    read_first = [(c.ordered[0].key, c.ordered[1].key) for c in grouped]
    assert read_first == [
        ("k1", "k2"), ("k1", "k3"), ("k2", "k1"), ("k2", "k3"), ("k3", "k1"), ("k3", "k2"),
    ]  # fmt: skip
    # Pair after pair (families off): the same asks, the same request keys, another order.
    plain = plan_comparisons(db, "d", "v", "grandpa", grouped=False).comparisons
    assert [(c.a.key, c.b.key, c.first) for c in plain] == [
        ("k1", "k2", "a"), ("k1", "k2", "b"), ("k1", "k3", "a"),
        ("k1", "k3", "b"), ("k2", "k3", "a"), ("k2", "k3", "b"),
    ]  # fmt: skip
    kind = Judgements("d", "v")

    def key(c: Comparison) -> str:
        request = kind.request(c)
        return request_key(request, "m", request.params)

    keys = {key(c) for c in grouped}
    assert keys == {key(c) for c in plain} and len(keys) == 6


def test_the_judge_reads_the_answers_in_the_order_asked() -> None:
    a = Sampled("ka", "first answer text", "naughty", "m1")
    b = Sampled("kb", "second answer text", "kindergarten", "m2")
    kind = Judgements("d", "v")
    one = kind.request(Comparison("p", "en", [{"role": "user", "content": "q"}], a, b, "a"))
    two = kind.request(Comparison("p", "en", [{"role": "user", "content": "q"}], a, b, "b"))
    text_one = one.body.messages[-1]["content"]
    text_two = two.body.messages[-1]["content"]
    assert text_one.index("first answer") < text_one.index("second answer")
    assert text_two.index("second answer") < text_two.index("first answer")
    assert one.role == JUDGE_ROLE and one.params["json_schema"] == VERDICT_SCHEMA


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


def _judgement(first: str, winner: str | None, key: str, **more: object) -> JudgementRow:
    scores = {"a": (8, 3), "b": (3, 8), "tie": (5, 5), None: (None, None)}[winner]
    fields = dict(
        dataset="d", version="v", prompt_id="p1", language="en", answer_a="k1", answer_b="k2",
        first=first, model_a="model-naughty", model_b="model-kindergarten", slot_a="naughty",
        slot_b="kindergarten", request_key=key, judge_slot="grandpa", judge_model="glm",
        status="ok" if winner else "unparsed", score_a=scores[0], score_b=scores[1],
        winner=winner, reason="r" if winner else None, cause=None if winner else "not JSON",
        run_id=None,
    )  # fmt: skip
    fields.update(more)
    return JudgementRow(**fields)  # type: ignore[arg-type]


def _figures_for(tmp_path: Path, first: str | None, second: str | None):
    db = tmp_path / "p.duckdb"
    write_samples(
        db,
        [
            _sample("k1", "p1", "naughty", "Min and max per row group."),
            _sample("k2", "p1", "kindergarten", "A summary of each block."),
        ],
    )
    assert write_judgements(db, "d", "v", [_judgement("a", first, "j1")]) == 1
    assert write_judgements(db, "d", "v", [_judgement("b", second, "j2")]) == 1
    # The same answer written again (a rerun) is not a second row.
    assert write_judgements(db, "d", "v", [_judgement("b", second, "j2")]) == 0
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
    a, b = Sampled("a", "x", None, None), Sampled("b", "y", None, None)
    asked = Comparison("p", "en", [{"role": "user", "content": "q"}], a, b, "a")
    body = Judgements("d", "v").request(asked).body
    params = {"json_schema": dict(VERDICT_SCHEMA)}
    llama = build_request(sf.slots["grandpa"], body, params)
    assert llama["response_format"]["json_schema"]["schema"] == VERDICT_SCHEMA
    assert "json_schema" not in llama.get("extra_body", {})
    vllm = build_request(sf.slots["naughty"], body, params)
    assert vllm["extra_body"]["structured_outputs"] == {"json": VERDICT_SCHEMA}
    assert "response_format" not in vllm and "json_schema" not in vllm["extra_body"]
    # The simulator reads the schema back through the same runtime objects.
    assert sf.slots["grandpa"].server.requested_schema(llama) == VERDICT_SCHEMA
    assert sf.slots["naughty"].server.requested_schema(vllm["extra_body"]) == VERDICT_SCHEMA


@pytest.mark.parametrize(
    ("slot_says", "asked"), [(64, VERDICT_MAX_TOKENS), (None, None), (512, 512)]
)
def test_a_verdict_is_given_the_tokens_its_schema_needs(
    slot_says: int | None, asked: int | None
) -> None:
    grandpa = shipped_slot_file().slots["grandpa"]
    judge = grandpa.model_copy(
        update={
            "request_defaults": grandpa.request_defaults.model_copy(
                update={"max_tokens": slot_says}
            )
        }
    )
    a, b = Sampled("a", "x", None, None), Sampled("b", "y", None, None)
    request = Judgements("d", "v", verdict_params(judge)).request(
        Comparison("p", "en", [{"role": "user", "content": "q"}], a, b, "a")
    )
    sent = build_request(judge, request.body, output_params(judge, request.params))
    assert sent.get("max_tokens") == asked
