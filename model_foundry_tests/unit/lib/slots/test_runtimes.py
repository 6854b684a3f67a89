"""Slot runtimes as objects: the registry validates slot files, and a new runtime is one class:
the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.client import build_request
from model_foundry.lib.slots.config import SlotFileError, load_slot_file
from model_foundry.lib.slots.runtimes import (
    LLAMACPP,
    RUNTIMES,
    VLLM,
    context_limit_from_error,
    runtime_for,
)
from model_foundry_tests.shared.lib.slots.runtimes import (
    SCHEMA,
)
from model_foundry_tests.slot_fixtures import shipped_data, shipped_slot_file, write_yaml


def test_an_unknown_runtime_is_one_sentence_naming_file_and_field(tmp_path: Path) -> None:
    data = shipped_data()
    data["slots"]["naughty"]["runtime"] = "sglang"
    path = write_yaml(tmp_path / "slots.yaml", data)
    with pytest.raises(SlotFileError) as info:
        load_slot_file(path)
    assert str(info.value) == (
        f"{path}: slots.naughty.runtime: unknown runtime 'sglang' (known: llamacpp, vllm)"
    )
    with pytest.raises(LookupError, match="unknown runtime 'sglang'"):
        runtime_for("sglang")


def test_each_runtime_states_and_reads_its_own_window_and_errors() -> None:
    for runtime in RUNTIMES.values():
        assert runtime.context_from(runtime.context_body(1234, "m"), "m") == 1234
        message, _ = runtime.context_error(1234, 5000)
        assert runtime.context_limit_from_error(message) == 1234
        # Read by the registry too, whichever runtime's wording it is.
        assert context_limit_from_error(message) == 1234
    assert LLAMACPP.context_from({"default_generation_settings": {}}, "m") is None
    assert VLLM.context_from({"data": []}, "m") is None
    assert VLLM.context_url("http://h:1/v1") == "http://h:1/v1/models"
    assert LLAMACPP.context_url("http://h:1/v1") == "http://h:1/props"
    assert VLLM.error_body(400, "x", "BadRequestError")["object"] == "error"
    assert LLAMACPP.error_body(400, "x", "invalid_request_error")["error"]["message"] == "x"


def test_structured_output_request_shapes() -> None:
    sf = shipped_slot_file()
    # llama.cpp: OpenAI's response_format, which the server turns into a grammar.
    kg = sf.slots["kindergarten"]
    req = build_request(kg, Body(messages=[{"role": "user", "content": "rate"}]))
    req.update(kg.server.structured_output(SCHEMA, name="verdict"))
    assert req["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
    }
    # vLLM: structured_outputs.json in the extra body (guided_json was removed in 0.12).
    naughty = sf.slots["naughty"]
    shape = naughty.server.structured_output(SCHEMA)
    assert shape == {"extra_body": {"structured_outputs": {"json": SCHEMA}}}
    assert "response_format" not in shape
