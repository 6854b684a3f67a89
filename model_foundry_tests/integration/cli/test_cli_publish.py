"""publish --file against a real nats-server: a bad line stops every line, --skip-bad
publishes exactly the good ones."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.nats.connection import NatsClient
from model_foundry_tests.integration.cli.test_cli import cli


def _stored(client: NatsClient) -> list[str]:
    """The event ids the stream holds, in order."""

    async def run() -> list[str]:
        async with client.jetstream() as (_nc, js):
            state = (await js.stream_info(client.stream)).state
            if not state.messages:
                return []
            return [
                json.loads((await js.get_msg(client.stream, seq)).data)["event_id"]
                for seq in range(state.first_seq, state.last_seq + 1)
            ]

    return asyncio.run(run())


def test_a_bad_line_publishes_nothing_and_skip_bad_publishes_the_good_ones(
    nats_server: LocalNatsServer, nats_env: None, nats_client: NatsClient, tmp_path: Path
) -> None:
    good = [
        {"event_id": "f1", "correlation_id": "s", "subject": "llm.tool_call", "payload": {}},
        {"event_id": "f2", "correlation_id": "s", "subject": "knowledge.embedding", "payload": {}},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text(
        f"{json.dumps(good[0])}\nnot json\n"
        f"{json.dumps({**good[0], 'event_id': 'f9', 'subject': 'llm.nope'})}\n"
        f"{json.dumps(good[1])}\n"
    )

    refused = cli("publish", "--file", str(path))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.splitlines()[:2] == [
        f"{path}:2: not JSON (Expecting value)",
        f"{path}:3: unknown subject 'llm.nope'; the stream takes llm.chat.persist, "
        "llm.tool_call, llm.flow.lineage, obsidian.semantic_search and the older "
        "knowledge.chat.persist, knowledge.embedding, knowledge.flow.lineage, knowledge.tool_call",
    ]
    assert _stored(nats_client) == []

    skipped = cli("publish", "--file", str(path), "--skip-bad")
    assert skipped.returncode == 0, skipped.stderr
    assert "published 2 events" in skipped.stdout and "(2 bad lines skipped)" in skipped.stdout
    assert len(skipped.stderr.splitlines()) == 2 and "Traceback" not in skipped.stderr
    assert _stored(nats_client) == ["f1", "f2"]
