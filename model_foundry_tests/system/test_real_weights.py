"""The real Gemma 3 270M weights on the portable llama-server build, with the project's Gemma
chat template: the check ``make real-model`` runs, and what the template does to a
conversation. One server serves the module; answers are a few tokens at temperature 0."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_foundry.devtools import llama_server, real_model
from model_foundry_tests.real_llama import gemma_server

pytestmark = pytest.mark.timeout(300)


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as resp:
        return json.loads(resp.read())


def _tokens(url: str, text: str, *, add_special: bool) -> list[int]:
    return _post(f"{url}/tokenize", {"content": text, "add_special": add_special})["tokens"]


@pytest.fixture(scope="module")
def gemma(
    llama_server_bin: Path, gemma_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[llama_server.LlamaServer]:
    with gemma_server(
        llama_server_bin, gemma_model, log_dir=tmp_path_factory.mktemp("gemma")
    ) as server:
        yield server


def test_the_build_steps_check_passes_on_the_portable_build(
    gemma: llama_server.LlamaServer,
) -> None:
    result = real_model.check_serving(gemma.url)

    assert real_model.CHECK_SYSTEM in result.rendered
    assert real_model.CHECK_QUESTION in result.rendered
    assert result.prompt_tokens >= result.text_tokens
    assert abs(result.prompt_tokens - result.tokenized) <= real_model.SPECIAL_TOKEN_SLACK
    assert result.completion_tokens >= 1


def test_a_system_message_reaches_gemma_inside_the_first_user_turn(
    gemma: llama_server.LlamaServer,
) -> None:
    system = "Answer as a lighthouse keeper would."
    user = "What do you watch for at night?"
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]

    rendered = _post(f"{gemma.url}/apply-template", {"messages": messages})["prompt"]
    reply = _post(
        f"{gemma.url}/v1/chat/completions",
        {"messages": messages, "max_tokens": 4, "temperature": 0, "seed": 0},
    )

    # Gemma has no system role: the system text opens the user's turn, before the question.
    turn = f"<start_of_turn>user\n{system}\n\n{user}<end_of_turn>\n"
    assert rendered == turn + "<start_of_turn>model\n"
    with_special = _tokens(gemma.url, rendered, add_special=True)
    without = _tokens(gemma.url, rendered, add_special=False)
    # The server adds exactly one BOS, and the template none: no doubled BOS.
    assert len(with_special) == len(without) + 1
    assert reply["usage"]["prompt_tokens"] == len(with_special)


def test_the_template_renders_a_conversation_as_llama_cpps_built_in_gemma_format(
    gemma: llama_server.LlamaServer, llama_server_bin: Path, gemma_model: Path, tmp_path: Path
) -> None:
    # Two system messages, an earlier model turn and untrimmed text: every rule of the
    # built-in format (LLM_CHAT_TEMPLATE_GEMMA) has something to do.
    conversation = [
        {"role": "system", "content": "  Reply in one word. "},
        {"role": "user", "content": "Name a tide.\n"},
        {"role": "assistant", "content": " Spring"},
        {"role": "system", "content": "Lower case only."},
        {"role": "user", "content": "Another?"},
    ]
    ours = _post(f"{gemma.url}/apply-template", {"messages": conversation})["prompt"]
    # --no-jinja: the built-in C++ template by its name, the source the file was written from.
    with llama_server.running(
        llama_server_bin,
        gemma_model,
        ctx=512,
        parallel=1,
        log_dir=tmp_path,
        extra=["--no-jinja", "--chat-template", "gemma"],
    ) as built_in:
        theirs = _post(f"{built_in.url}/apply-template", {"messages": conversation})["prompt"]

    assert ours == theirs
    assert "<start_of_turn>model\nSpring<end_of_turn>" in ours


def test_the_check_refuses_a_server_whose_template_ignores_the_messages(
    llama_server_bin: Path, gemma_model: Path, tmp_path: Path
) -> None:
    # The trap of this build: the built-in template's name, taken for a template's text.
    with (
        llama_server.running(
            llama_server_bin,
            gemma_model,
            ctx=1024,
            parallel=1,
            log_dir=tmp_path,
            extra=["--chat-template", "gemma", "--threads", str(real_model.server_threads())],
        ) as server,
        pytest.raises(real_model.ModelBroken, match="ignores the messages"),
    ):
        real_model.check_serving(server.url, who="slot kindergarten")
