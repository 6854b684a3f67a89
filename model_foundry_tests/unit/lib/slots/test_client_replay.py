"""The client against recorded server responses (vLLM shapes, odd error bodies, empty answers):
the unit tests."""

from __future__ import annotations

import json

import pytest

from model_foundry.lib.slots.api_errors import status_error
from model_foundry.lib.slots.attempt import empty_answer_reason
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.errors import describe_error, error_message_from_body
from model_foundry.lib.slots.quirks import TRANSLATION_EXAMPLES
from model_foundry.lib.slots.request import build_request
from model_foundry.lib.slots.server_errors import context_limit_from_error
from model_foundry_tests.replay_server import (
    FIXTURES,
    load_fixture,
)
from model_foundry_tests.shared.lib.slots.client_replay import (
    BLANK_BODIES,
    INSTRUCTION,
    LLAMA_CPP_TOO_LONG,
    TRANSLATE,
)
from model_foundry_tests.slot_fixtures import shipped_data, slot_file_from

# ---------------------------------------------------------------------------------------------
# Error bodies: any body gives one readable line, never an exception.


@pytest.mark.parametrize("body", BLANK_BODIES, ids=repr)
def test_bodies_without_a_message_give_none(body: object) -> None:
    assert error_message_from_body(body) is None


def test_messages_are_found_in_odd_places_and_cut_to_their_first_line() -> None:
    assert error_message_from_body({"error": {"message": "\n  bad thing \nmore"}}) == "bad thing"
    assert error_message_from_body({"detail": [{"msg": "field required"}]}) == "field required"
    assert error_message_from_body({"error": "plain string"}) == "plain string"
    assert error_message_from_body({"message": " ", "error": {"message": "inner"}}) == "inner"


def test_describe_error_always_gives_one_line() -> None:
    exc = status_error(400, '{"message": " "}')
    assert describe_error(exc) == ("BadRequestError", "HTTP 400 with no error message", 400)
    assert describe_error(ValueError(" \n ")) == ("ValueError", "ValueError", None)
    assert describe_error(ValueError("\nfirst\nsecond")) == ("ValueError", "first", None)
    assert describe_error(TimeoutError()) == ("TimeoutError", "request timed out", None)

    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert describe_error(Broken()) == ("Broken", "Broken", None)


# ---------------------------------------------------------------------------------------------
# Empty answers are errors, retried in the run and asked again by a later run.


def test_empty_answer_reason_without_a_known_budget() -> None:
    assert empty_answer_reason("length", "r", None).startswith("the model spent all its max_tokens")
    assert empty_answer_reason("length", " ", 10) == "the slot returned an empty answer"


# ---------------------------------------------------------------------------------------------
# A translation on a chat slot carries its instruction.


def test_the_instruction_folds_into_the_user_turn_where_system_is_rejected() -> None:
    data = shipped_data()
    kindergarten = slot_file_from(data).slots["kindergarten"]
    req = build_request(kindergarten, Body(text="Good evening."), TRANSLATE)
    # The instruction opens the first user turn (the first worked example's), the text is last.
    examples = [text for pair in TRANSLATION_EXAMPLES for text in pair]
    assert [m["role"] for m in req["messages"]] == ["user", "assistant"] * 3 + ["user"]
    assert [m["content"] for m in req["messages"]] == [
        f"{INSTRUCTION}\n\n{examples[0]}",
        *examples[1:],
        "Good evening.",
    ]
    # Plain text without languages stays a plain chat turn.
    plain = build_request(slot_file_from(data).slots["naughty"], Body(text="hello"))
    assert plain["messages"] == [{"role": "user", "content": "hello"}]


# ---------------------------------------------------------------------------------------------
# vLLM response shapes, replayed from fixtures.


def test_vllm_models_fixture_has_max_model_len_in_each_card() -> None:
    cards = load_fixture("vllm/models.json")["data"]
    assert cards and all(isinstance(c["max_model_len"], int) for c in cards)


def test_every_vllm_fixture_names_its_source() -> None:
    for path in sorted((FIXTURES / "vllm").iterdir()):
        if path.suffix == ".json":
            assert "vllm/" in json.loads(path.read_text())["_source"], path.name
        elif path.suffix == ".jsonl":
            assert "vllm" in path.with_name(path.name + ".source").read_text(), path.name


# ---------------------------------------------------------------------------------------------
# Context size from "too long" errors.


@pytest.mark.parametrize(
    ("message", "limit"),
    [
        (LLAMA_CPP_TOO_LONG, 1024),
        ("input (2719 tokens) is larger than the max context size (512 tokens). skipping", 512),
        ("This model's maximum context length is 8192 tokens. However, you requested 9000", 8192),
        ("the request exceeds the available context size, try increasing it", None),
        ("HTTP 400 with no error message", None),
        ("", None),
    ],
)
def test_context_limit_from_error_messages(message: str, limit: int | None) -> None:
    assert context_limit_from_error(message) == limit
