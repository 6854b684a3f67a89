"""Reading a recipe: each bad recipe gets one sentence naming the file and the field; the
column graph's waves and dependants."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from model_foundry.lib.gates.verdict import REASON_MAX
from model_foundry.lib.recipes.graph import dependants, levels
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.recipes.roles import check_roles
from model_foundry.lib.recipes.spec import RecipeError
from model_foundry_tests.recipe_helpers import EVERY_COLUMN, PAIRWISE
from model_foundry_tests.slot_fixtures import shipped_data, slot_file_from

SOURCE = "recipes/q/defs.yaml"


def _column(name: str) -> int:
    return next(i for i, c in enumerate(EVERY_COLUMN["columns"]) if c["name"] == name)


def _changed(column: str, **fields: Any) -> dict[str, Any]:
    raw = copy.deepcopy(EVERY_COLUMN)
    raw["columns"][_column(column)].update(fields)
    return raw


def _sentence(raw: Any) -> str:
    with pytest.raises(RecipeError) as caught:
        parse_recipe(raw, SOURCE)
    return str(caught.value)


@pytest.mark.parametrize(
    ("raw", "sentence"),
    [
        (
            _changed("answer", type="llm_txt"),
            f"{SOURCE}: columns.answer.type: unknown column type 'llm_txt' (known: seed, "
            "sampler, expression, llm_text, llm_structured, llm_judge, validation)",
        ),
        (
            _changed("answer", prompt="{{ qestion }}"),
            f"{SOURCE}: columns.answer.prompt: names column 'qestion', which the recipe does "
            "not have",
        ),
        (
            _changed("question", expr="{{ query }} {{ score }}"),
            f"{SOURCE}: columns.question: is part of a cycle "
            "(question -> score -> answer -> question)",
        ),
        (
            _changed("facts", output_format={"type": "object", "properties": {"a": {"type": 5}}}),
            f"{SOURCE}: columns.facts.output_format.properties.a.type: is not a valid JSON "
            "schema (5 is not valid under any of the given schemas)",
        ),
        (
            _changed("facts", output_format={"type": "string"}),
            f"{SOURCE}: columns.facts.output_format: must be an object schema with properties "
            "(its sub-columns)",
        ),
        (
            _changed("answer", promt="{{ question }}"),
            f"{SOURCE}: columns.answer.promt: is not a field of a llm_text column",
        ),
        (
            _changed("tone", weights=[1]),
            f"{SOURCE}: columns.tone.weights: must be a list as long as values",
        ),
        (
            _changed("answer", prompt="{{ question }"),
            f"{SOURCE}: columns.answer.prompt: template does not parse (line 1: unexpected '}}')",
        ),
        (
            _changed("is_python", target="nowhere"),
            f"{SOURCE}: columns.is_python.target: names column 'nowhere', which the recipe "
            "does not have",
        ),
        (
            _changed("long_enough", similar_to="querry", min_similarity=0.5),
            f"{SOURCE}: columns.long_enough.similar_to: names column 'querry', which the "
            "recipe does not have",
        ),
        (
            _changed("long_enough", similar_to="query", min_similarity=1.5),
            f"{SOURCE}: columns.long_enough.min_similarity: must be a number from 0 to 1",
        ),
        (
            _changed("long_enough", similar_to="query", min_similarity="high"),
            f"{SOURCE}: columns.long_enough.min_similarity: must be a number",
        ),
        (
            _changed("long_enough", similar_to="query"),
            f"{SOURCE}: columns.long_enough.min_similarity: is needed with similar_to (a "
            "number from 0 to 1)",
        ),
        (
            _changed("long_enough", min_similarity=0.5),
            f"{SOURCE}: columns.long_enough.similar_to: is needed with min_similarity (the "
            "column the target is compared with)",
        ),
        (
            _changed("long_enough", similar_to="answer", min_similarity=0.5),
            f"{SOURCE}: columns.long_enough.similar_to: must name a column other than the "
            "target",
        ),
        (
            {**EVERY_COLUMN, "shedule": "0 3 * * *"},
            f"{SOURCE}: attributes.shedule: is not a field of a recipe",
        ),
        (
            {**EVERY_COLUMN, "seed": None},
            f"{SOURCE}: seed: is needed: the recipe has seed columns",
        ),
    ],
    ids=[
        "unknown-type", "unknown-column", "cycle", "bad-schema", "not-object",
        "unknown-field", "weights", "template-syntax", "validation-target",
        "similar-to-unknown", "similarity-range", "similarity-type", "similarity-alone",
        "similar-to-alone", "similar-to-target", "top-field", "no-seed",
    ],
)  # fmt: skip
def test_a_bad_recipe_is_one_sentence_naming_the_file_and_the_field(
    raw: dict[str, Any], sentence: str
) -> None:
    assert _sentence(raw) == sentence


def test_waves_read_only_earlier_waves_and_dependants_follow_reads() -> None:
    recipe = parse_recipe(copy.deepcopy(EVERY_COLUMN), SOURCE)
    waves = [[c.name for c in wave] for wave in levels(recipe)]
    assert waves == [
        ["query", "tone", "budget"],
        ["question"],
        ["answer"],
        ["facts", "is_python", "long_enough"],
        ["score"],
    ]
    assert dependants(recipe, "facts") == {"score"}
    assert dependants(recipe, "question") == {"answer", "facts", "score", "is_python",
                                              "long_enough"}  # fmt: skip
    assert dependants(recipe, "score") == set()


def test_a_similarity_check_waits_for_the_column_it_compares_with() -> None:
    recipe = parse_recipe(_changed("long_enough", similar_to="facts", min_similarity=0.2),
                          SOURCE)  # fmt: skip
    check = recipe.column("long_enough")
    assert check.similar_to == "facts" and check.min_similarity == 0.2
    assert check.reads == ("answer", "facts")
    waves = [[c.name for c in wave] for wave in levels(recipe)]
    assert waves[3:] == [["facts", "is_python"], ["score", "long_enough"]]
    assert "long_enough" in dependants(recipe, "facts")


def test_a_judge_column_has_its_rubric_as_a_schema_with_typed_sub_columns() -> None:
    score = parse_recipe(copy.deepcopy(EVERY_COLUMN), SOURCE).column("score")
    assert score.role == "judge"
    assert score.schema() == {
        "type": "object",
        "properties": {
            "helpful": {"type": "integer", "minimum": 1, "maximum": 5},
            "reason": {"type": "string", "maxLength": REASON_MAX},
        },
        "required": ["helpful", "reason"],
        "additionalProperties": False,
    }
    assert score.sub_columns() == {"helpful": "integer", "reason": "string"}


def test_roles_are_checked_against_the_slot_file() -> None:
    slot_file = slot_file_from(shipped_data())
    check_roles(parse_recipe(copy.deepcopy(EVERY_COLUMN), SOURCE), slot_file, None)
    recipe = parse_recipe(_changed("facts", role="poet"), SOURCE)
    with pytest.raises(RecipeError) as caught:
        check_roles(recipe, slot_file, None)
    assert str(caught.value).startswith(
        f"{SOURCE}: columns.facts.role: the slot file test-slots.yaml has no role 'poet' "
        "(it has: cheap, grandpa, "
    )
    data = shipped_data()
    del data["slots"]["grandpa"]
    data["profiles"] = {k: [s for s in v if s != "grandpa"] for k, v in data["profiles"].items()}
    data["roles"] = {k: v for k, v in data["roles"].items() if k not in ("grandpa", "reasoning")}
    no_judge = slot_file_from(data)
    with pytest.raises(RecipeError) as caught:
        check_roles(parse_recipe(copy.deepcopy(EVERY_COLUMN), SOURCE), no_judge, None)
    assert str(caught.value).startswith(f"{SOURCE}: columns.score.role: profile 'standard' of ")


def _pairwise(**fields: Any) -> dict[str, Any]:
    raw = copy.deepcopy(PAIRWISE)
    raw["columns"][3].update(fields)
    return raw


@pytest.mark.parametrize(
    ("fields", "sentence"),
    [
        (
            {"compare": ["answer", "cheap_anser"]},
            f"{SOURCE}: columns.preference.compare: names column 'cheap_anser', which the "
            "recipe does not have",
        ),
        (
            {"compare": ["answer", "answer"]},
            f"{SOURCE}: columns.preference.compare: compares column 'answer' with itself",
        ),
        (
            {"compare": ["answer"]},
            f"{SOURCE}: columns.preference.compare: must name two columns, [a, b]",
        ),
        (
            {"compare": ["answer", "preference"]},
            f"{SOURCE}: columns.preference: reads itself",
        ),
    ],
    ids=["unknown", "itself", "one", "self-read"],
)
def test_a_bad_pairwise_judge_is_one_sentence_naming_the_file_and_the_field(
    fields: dict[str, Any], sentence: str
) -> None:
    assert _sentence(_pairwise(**fields)) == sentence


def test_a_pairwise_judge_reads_both_columns_and_asks_for_both_answers_scores() -> None:
    recipe = parse_recipe(copy.deepcopy(PAIRWISE), SOURCE)
    judge = recipe.column("preference")
    assert judge.is_pairwise and judge.role == "judge"
    assert judge.compare == ("answer", "cheap_answer")
    assert set(judge.reads) == {"answer", "cheap_answer", "query"}
    assert [[c.name for c in wave] for wave in levels(recipe)][-1] == ["preference"]
    schema = judge.schema()
    assert schema is not None
    assert schema["required"] == ["clear_1", "clear_2", "helpful_1", "helpful_2", "reason"]
    assert schema["properties"]["helpful_2"] == {"type": "integer", "minimum": 1, "maximum": 10}
    assert judge.sub_columns() == {
        "winner": "string",
        "agree": "boolean",
        "helpful_a": "number",
        "helpful_b": "number",
        "clear_a": "number",
        "clear_b": "number",
    }


@pytest.mark.parametrize(
    ("seed", "sentence"),
    [
        (
            {"file": "seed.jsonl", "incremental": "commit_seq"},
            f"{SOURCE}: seed.incremental: is for an sql seed only",
        ),
        (
            {"sql": "SELECT 1", "incremental": "Commit Seq"},
            f"{SOURCE}: seed.incremental: must name a column of the query's rows, such as "
            "commit_seq",
        ),
        (
            {"sql": "SELECT 1", "since": "commit_seq"},
            f"{SOURCE}: seed.since: is not a field of seed (file, sql, incremental)",
        ),
    ],
    ids=["file", "not-a-column", "unknown"],
)
def test_a_bad_incremental_seed_is_one_sentence(seed: dict[str, Any], sentence: str) -> None:
    assert _sentence({**copy.deepcopy(EVERY_COLUMN), "seed": seed}) == sentence


def test_an_incremental_seed_names_its_position_column() -> None:
    raw = {**copy.deepcopy(EVERY_COLUMN), "seed": {"sql": "SELECT 1", "incremental": "seq"}}
    seed = parse_recipe(raw, SOURCE).seed
    assert seed is not None and (seed.sql, seed.incremental) == ("SELECT 1", "seq")


@pytest.mark.parametrize(
    ("export", "sentence"),
    [
        (True, f"{SOURCE}: export: must be a mapping such as {{on_schedule: true}}"),
        ({"on_shedule": True}, f"{SOURCE}: export.on_shedule: is not a field of export "
         "(on_schedule)"),
        ({"on_schedule": "yes"}, f"{SOURCE}: export.on_schedule: must be true or false"),
    ],
    ids=["not-mapping", "unknown", "not-bool"],
)  # fmt: skip
def test_a_bad_export_field_is_one_sentence(export: Any, sentence: str) -> None:
    assert _sentence({**copy.deepcopy(EVERY_COLUMN), "export": export}) == sentence


def test_export_on_schedule_is_off_unless_the_recipe_asks() -> None:
    assert parse_recipe(copy.deepcopy(EVERY_COLUMN), SOURCE).export_on_schedule is False
    raw = {**copy.deepcopy(EVERY_COLUMN), "export": {"on_schedule": True}}
    assert parse_recipe(raw, SOURCE).export_on_schedule is True
    raw["export"] = {"on_schedule": False}
    assert parse_recipe(raw, SOURCE).export_on_schedule is False


def _text_column(**fields: Any) -> dict[str, Any]:
    raw = copy.deepcopy(EVERY_COLUMN)
    answer = raw["columns"][_column("answer")]
    for key in ("prompt", "system"):
        answer.pop(key)
    answer.update({"role": "translator", "text": "{{ question }}", **fields})
    return raw


@pytest.mark.parametrize(
    ("raw", "sentence"),
    [
        (
            _text_column(prompt="{{ question }}"),
            f"{SOURCE}: columns.answer.text: and prompt are both given: a column sends either "
            "the bare text or a prompt",
        ),
        (
            _text_column(system="Translate."),
            f"{SOURCE}: columns.answer.system: is not sent with text (the bare text has no "
            "system turn)",
        ),
        (
            _text_column(text="{{ qestion }}"),
            f"{SOURCE}: columns.answer.text: names column 'qestion', which the recipe does not "
            "have",
        ),
        (
            _text_column(target_lang="{{ languge }}"),
            f"{SOURCE}: columns.answer.target_lang: names column 'languge', which the recipe "
            "does not have",
        ),
        (
            _text_column(params={"target_lang": "Japanese"}),
            f"{SOURCE}: columns.answer.params.target_lang: is set by the column's target_lang",
        ),
        (
            _changed("answer", source_lang="English"),
            f"{SOURCE}: columns.answer.source_lang: is for a column with text (the bare text a "
            "translator is sent), not a prompt",
        ),
        (
            _changed("facts", text="{{ answer }}"),
            f"{SOURCE}: columns.facts.text: is not a field of a llm_structured column",
        ),
    ],
    ids=["text-and-prompt", "text-and-system", "text-unknown-column", "lang-unknown-column",
         "lang-in-params", "lang-without-text", "text-on-structured"],
)  # fmt: skip
def test_a_bad_text_column_is_one_sentence(raw: dict[str, Any], sentence: str) -> None:
    assert _sentence(raw) == sentence


def test_a_text_column_reads_the_columns_its_text_and_languages_name() -> None:
    raw = _text_column(source_lang="English", target_lang="{{ tone }}")
    answer = parse_recipe(raw, SOURCE).column("answer")
    assert (answer.text, answer.prompt, answer.system) == ("{{ question }}", None, None)
    assert (answer.source_lang, answer.target_lang) == ("English", "{{ tone }}")
    assert answer.reads == ("question", "tone")
