"""A slot whose chat template drops the messages is refused, on real llama-servers.

The tiny random-weight GGUF carries a ChatML template; ``--chat-template gemma`` on this
llama.cpp build renders every request as the word "gemma" (the name taken as a Jinja
template). Rendering does not depend on the weights, so the tiny model shows both cases.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import duckdb
import pytest

from model_foundry.devtools import llama_server
from model_foundry.lib.llm import CompletionStore, Request
from model_foundry.lib.llm import request as llm_request
from model_foundry.lib.llm.answer import answer
from model_foundry.lib.llm.causes import failure_causes
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.runtimes import httpx
from model_foundry.lib.slots.template_check import TEMPLATE_IGNORES_MESSAGES, check_template
from model_foundry_tests.real_llama import llama_slot_file, metrics
from model_foundry_tests.slot_fixtures import fast_options, write_yaml

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def pair(
    llama_server_bin: Path, tiny_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """naughty: the GGUF's own template; kindergarten: ``--chat-template gemma``."""
    logs = tmp_path_factory.mktemp("logs")
    with ExitStack() as stack:
        servers = {
            "naughty": stack.enter_context(
                llama_server.running(llama_server_bin, tiny_model, ctx=2048, parallel=2,
                                     log_dir=logs)
            ),
            "kindergarten": stack.enter_context(
                llama_server.running(llama_server_bin, tiny_model, ctx=2048, parallel=2,
                                     log_dir=logs, extra=["--chat-template", "gemma"])
            ),
        }  # fmt: skip
        yield {"servers": servers, "data": llama_slot_file(servers, max_tokens=4), "logs": logs}


def _slot_file(tmp_path: Path, data: dict[str, Any], fallbacks: list[str]) -> Any:
    data = {**data, "roles": {**data["roles"], "kindergarten": {"fallbacks": fallbacks}}}
    return load_slot_file(write_yaml(tmp_path / "slots.yaml", data))


def test_the_check_passes_a_template_that_keeps_the_messages_and_refuses_one_that_drops_them(
    pair: dict[str, Any], tmp_path: Path
) -> None:
    sf = _slot_file(tmp_path, pair["data"], [])
    with httpx.Client(timeout=10) as http:
        good = check_template(http, sf.slots["naughty"])
        bad = check_template(http, sf.slots["kindergarten"])
    assert good.ok is True, good.detail
    assert bad.refused
    assert bad.detail.startswith("slot kindergarten: its chat template ignores the messages: ")
    assert "'gemma'" in bad.detail  # what the server rendered, quoted


def test_a_refused_slot_answers_nothing_and_its_requests_are_recorded_with_the_cause(
    pair: dict[str, Any], tmp_path: Path
) -> None:
    """Only the refused slot serves the role: recorded once with the sentence, never sent."""
    sf = _slot_file(tmp_path, pair["data"], [])
    db = tmp_path / "mf.duckdb"
    requests = [
        llm_request.plan(
            Request("t", "kindergarten", Body(messages=[{"role": "user", "content": f"q{i}"}])),
            sf,
        )
        for i in range(3)
    ]
    before = metrics(pair["servers"]["kindergarten"].url).get("llamacpp:prompt_tokens_total", 0)
    with ContextBook(sf.live_slots()) as book:
        fitted = llm_request.fit(requests, book, sf)
    batch = answer(CompletionStore(db), fitted, sf, options=fast_options(tmp_path / "locks"))
    after = metrics(pair["servers"]["kindergarten"].url).get("llamacpp:prompt_tokens_total", 0)
    assert after == before, "a request reached the refused slot"
    assert not batch.results and len(batch.failed) == 3
    causes = failure_causes(batch.unfit_attempts)
    assert list(causes.values()) == [3]
    (cause,) = causes
    assert cause.startswith("slot kindergarten: its chat template ignores the messages")
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute(
            "SELECT status, error_class, count(*) FROM llm_completions GROUP BY ALL"
        ).fetchall()
    assert stored == [("error", TEMPLATE_IGNORES_MESSAGES, 3)]


def test_a_refused_slot_leaves_its_role_to_the_fallback(
    pair: dict[str, Any], tmp_path: Path
) -> None:
    sf = _slot_file(tmp_path, pair["data"], ["naughty"])
    request = llm_request.plan(
        Request("t", "kindergarten", Body(messages=[{"role": "user", "content": "hello"}])), sf
    )
    with ContextBook(sf.live_slots()) as book:
        (fitted,) = llm_request.fit([request], book, sf)
    assert fitted.only_slots == ("naughty",) and fitted.unfit_reason is None
    batch = answer(
        CompletionStore(tmp_path / "mf.duckdb"),
        [fitted],
        sf,
        options=fast_options(tmp_path / "locks"),
    )
    assert batch.results[request.key].slot == "naughty"
