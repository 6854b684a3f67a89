"""Downstream assets in process: real nats-server, slot simulator over HTTP, DuckDB files: the
unit tests."""

from __future__ import annotations

import pytest

from model_foundry.lib.gates.script import detect_language
from model_foundry.lib.llm import Request
from model_foundry.lib.llm.request import output_params, request_key
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import load_slot_file
from model_foundry.lib.summaries.prompts import ChatLine, transcript, translation_params
from model_foundry_tests.shared.defs.pipeline_assets import (  # noqa: F401 - fixtures are found by name
    slot_path_fixture,
)

pytestmark = pytest.mark.timeout(300)


def test_language_detection_and_translation_direction() -> None:
    assert detect_language("Refactor the DuckDB writer.") == "en"
    assert detect_language("DuckDB のロック競合を避ける方法を教えてください。") == "ja"
    assert detect_language("") == "en"
    assert translation_params("ja") == {"source_lang": "Japanese", "target_lang": "English"}
    assert translation_params("en") == {"source_lang": "English", "target_lang": "Japanese"}


def test_transcript_keeps_the_newest_messages_cut_short() -> None:
    lines = [ChatLine("user", f"message {i} " + "x" * 50) for i in range(5)]
    text = transcript(lines, max_messages=2, max_chars=20)
    assert text.splitlines()[0] == "[3 earlier messages omitted]"
    assert text.splitlines()[1].startswith("user: message 3") and text.endswith("…")


def test_request_key_changes_with_what_changes_the_answer() -> None:
    messages = [{"role": "user", "content": "hi"}]
    asked = Request("t", "r", Body(messages=messages))
    base = request_key(asked, "m", {"temperature": 0.7})
    assert base == request_key(
        Request("t", "r", Body(messages=list(messages))), "m", {"temperature": 0.7}
    )
    assert base != request_key(asked, "m", {"temperature": 0.2})
    assert base != request_key(asked, "other-model", {"temperature": 0.7})
    assert base != request_key(
        Request("t2", "r", Body(messages=messages)), "m", {"temperature": 0.7}
    )
    other = Request("t", "r", Body(messages=[{"role": "user"}]))
    assert base != request_key(other, "m", {"temperature": 0.7})
    slot = load_slot_file().slots["kindergarten"]
    params = output_params(slot, {"seed": 1}, thinking=False)
    assert params["max_tokens"] == 1024 and params["thinking"] is False and params["seed"] == 1
