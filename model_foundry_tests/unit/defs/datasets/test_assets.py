"""Dataset collection against the slot simulator over real HTTP and real DuckDB files: the unit
tests."""

from __future__ import annotations

import pytest

from model_foundry.lib.datasets.prompts import parse_jsonl, prompt_from_row

pytestmark = pytest.mark.timeout(300)


def test_prompt_rows_accept_prompt_or_messages_and_name_the_problem() -> None:
    record = prompt_from_row({"id": "x", "prompt": "hi", "system": "be brief"}, "file:a")
    assert record.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    prompts, problems = parse_jsonl(
        '{"prompt": "ok"}\n\n{"prompt": ""}\n[1]\n{"messages": [{"role": "system"}]}\n', "f"
    )
    assert [p.prompt_text for p in prompts] == ["ok"]
    assert problems == [
        "f:3: needs a non-empty 'prompt' string or a 'messages' list",
        "f:4: must be a JSON object",
        "f:5: needs at least one user message",
    ]
