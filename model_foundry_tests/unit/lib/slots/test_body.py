"""The request body travels as one value, and request keys did not change when it became one."""

from __future__ import annotations

import pytest

from model_foundry.lib.llm import Body, Planned, Request
from model_foundry.lib.llm.request import request_key
from model_foundry.lib.slots.request import build_request
from model_foundry_tests.slot_fixtures import shipped_slot_file

MESSAGES = [
    {"role": "system", "content": "Résumé in one line."},
    {"role": "user", "content": "hello wörld"},
]
TRANSLATE = {"source_lang": "English", "target_lang": "Japanese"}


@pytest.mark.parametrize(
    "fields",
    [{}, {"messages": MESSAGES, "prompt": "p"}, {"prompt": "p", "text": "t"}],
    ids=["none", "messages+prompt", "prompt+text"],
)
def test_a_body_holds_exactly_one_kind(fields: dict) -> None:
    with pytest.raises(ValueError, match="exactly one of messages, prompt, text"):
        Body(**fields)


def test_each_kind_and_its_spelling() -> None:
    assert Body(messages=MESSAGES).kind == "messages"
    assert Body(prompt="").kind == "prompt"  # an empty prompt is still a prompt
    assert Body(text="t").raw == "t" and Body(messages=MESSAGES).raw is None
    assert Body(text="t").as_dict() == {"messages": None, "prompt": None, "text": "t"}


# Computed on main before the body became one value: a changed key would make every stored
# answer look new, and every request be asked again.
KNOWN_KEYS = [
    (
        Request("session_summary", "summary", Body(messages=MESSAGES), {"max_tokens": 64}),
        "gemma-3",
        {"max_tokens": 64, "thinking": False},
        "3bbf81e5dd3ac85707ae2e2ddbc7ca5cd181c308e0dfadff4bc01f282dccc73d",
    ),
    (
        Request("summary_translation", "translation", Body(text="Good morning."), TRANSLATE),
        "plamo-2-translate",
        {**TRANSLATE, "max_tokens": 512},
        "cba92c312b5f57dd162a6354363e43953a821f975fbd20a3777cbf86ec90e9f0",
    ),
    (
        Request("bench", "raw", Body(prompt="Once upon a time")),
        "m",
        {},
        "f57432e60e325faedd5651d448748197949b223f406152f69f931ad579ee57d9",
    ),
]


@pytest.mark.parametrize(("request_", "model", "params", "key"), KNOWN_KEYS)
def test_request_keys_are_unchanged(request_: Request, model: str, params: dict, key: str) -> None:
    assert request_key(request_, model, params) == key


def test_the_stored_request_text_is_unchanged() -> None:
    chat = Planned(KNOWN_KEYS[0][0], "k", "m", {}, "s")
    assert chat.request_json() == (
        '{"messages":[{"content":"Résumé in one line.","role":"system"},'
        '{"content":"hello wörld","role":"user"}],"prompt":null,"text":null}'
    )
    text = Planned(KNOWN_KEYS[1][0], "k", "m", {}, "s")
    assert text.request_json() == '{"messages":null,"prompt":null,"text":"Good morning."}'


def test_the_task_carries_the_same_body_and_params() -> None:
    planned = Planned(KNOWN_KEYS[1][0], "k", "m", {}, "s")
    task = planned.to_task()
    assert task.body is planned.request.body and task.params == TRANSLATE


def test_each_slot_kind_renders_the_body_it_is_given() -> None:
    sf = shipped_slot_file()
    plamo = build_request(sf.slots["translator"], Body(text="Hello"), TRANSLATE)
    assert "Hello" in plamo["prompt"] and "messages" not in plamo
    # Chat messages cannot be turned into plamo's translation prompt.
    with pytest.raises(ValueError, match="needs the text to translate"):
        build_request(sf.slots["translator"], Body(messages=MESSAGES))
    one_turn = build_request(sf.slots["naughty"], Body(prompt="hi"))
    assert one_turn["messages"] == [{"role": "user", "content": "hi"}]
