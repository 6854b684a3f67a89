"""Slot runtimes as objects: the registry validates slot files, and a new runtime is one class:
the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import SlotFileError, load_slot_file
from model_foundry.lib.slots.request import build_request
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


# ---------------------------------------------------------------------------------------------
# Prompt tokens the server reused from its cache.

# llama-server 0.3.36 sends both fields, from one counter (server-task.cpp, server-common.cpp).
LLAMA_USAGE = {"prompt_tokens": 44, "prompt_tokens_details": {"cached_tokens": 40}}
LLAMA_TIMINGS = {"cache_n": 40, "prompt_n": 4, "predicted_n": 12}


def test_llama_cpp_reuse_is_read_from_cache_n_or_else_the_usage_details() -> None:
    assert LLAMACPP.cached_tokens(LLAMA_USAGE, LLAMA_TIMINGS) == 40
    # cache_n is the field the server's README documents; a build without timings has only
    # the usage details, and one without either says nothing.
    assert LLAMACPP.cached_tokens({"prompt_tokens": 44}, {"cache_n": 0}) == 0
    assert LLAMACPP.cached_tokens(LLAMA_USAGE, None) == 40
    assert LLAMACPP.cached_tokens({"prompt_tokens": 44}, {"prompt_n": 44}) is None
    assert LLAMACPP.cached_tokens(None, None) is None


def test_vllm_reuse_is_read_only_where_the_server_reports_it() -> None:
    # --enable-prompt-tokens-details on: the OpenAI field.
    reported = {"prompt_tokens": 600, "prompt_tokens_details": {"cached_tokens": 512}}
    assert VLLM.cached_tokens(reported, None) == 512
    # Off (vLLM's default), or a release that leaves out a 0: nothing, never a guessed 0.
    for usage in ({"prompt_tokens": 600}, {"prompt_tokens": 600, "prompt_tokens_details": None}):
        assert VLLM.cached_tokens(usage, None) is None
    # vLLM sends no timings; a cache_n there is not vLLM's to read.
    assert VLLM.cached_tokens({"prompt_tokens": 600}, {"cache_n": 5}) is None


def test_a_reuse_field_filled_oddly_reads_as_not_reported() -> None:
    for odd in ("40", -1, 4.5, True, None, [40], {"n": 40}):
        details = {"prompt_tokens": 44, "prompt_tokens_details": {"cached_tokens": odd}}
        assert VLLM.cached_tokens(details, None) is None, odd
        assert LLAMACPP.cached_tokens({"prompt_tokens": 44}, {"cache_n": odd}) is None, odd
    assert VLLM.cached_tokens({"prompt_tokens_details": "40"}, None) is None
    assert LLAMACPP.cached_tokens("usage", "timings") is None  # type: ignore[arg-type]
