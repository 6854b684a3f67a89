"""Downstream assets in process: real nats-server, slot simulator over HTTP, DuckDB files.

Inbox -> typed tables -> summaries -> translations -> throughput; reruns with nothing new are
zero-count successes; new chat re-summarises only its session; failed requests are retried
by the next run and succeeded ones never resent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_foundry.defs.inbox_tables.assets import inbox_tables
from model_foundry.defs.resources import FoundryDuckDB, NatsResource, SlotsResource
from model_foundry.defs.summaries.assets import session_summaries, session_summary_translations
from model_foundry.defs.throughput.assets import slot_throughput
from model_foundry.lib.llm import Request
from model_foundry.lib.llm.request import output_params, request_key
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import load_slot_file
from model_foundry.lib.summaries.prompts import (
    ChatLine,
    detect_language,
    transcript,
    translation_params,
)
from model_foundry_tests.pipeline_helpers import slot_simulator_process

pytestmark = pytest.mark.timeout(300)

DOWNSTREAM = [inbox_tables, session_summaries, session_summary_translations, slot_throughput]


@pytest.fixture(scope="module")
def slot_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with slot_simulator_process(tmp_path_factory.mktemp("sim"), speed=50) as path:
        yield path


def resources(nats: NatsClient, db_path: Path, slot_path: Path) -> dict[str, Any]:
    return {
        "nats": NatsResource.of(nats),
        "duckdb": FoundryDuckDB(database=str(db_path)),
        "slots": SlotsResource(slot_file=str(slot_path)),
    }


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
