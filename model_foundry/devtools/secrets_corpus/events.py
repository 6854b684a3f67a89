"""Sessions as events of the project's contract."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from model_foundry.devtools.secrets_corpus.model import Case

SYSTEM_PROMPT = "You are a coding agent working in the acme monorepo. Be careful with credentials."
_START = datetime(2025, 3, 4, 9, 0, tzinfo=UTC)
_FILE_CONTEXTS = {"dotenv", "yaml", "toml", "ini", "json", "conn_string", "config_file",
                  "python_settings", "k8s_secret", "aws_credentials", "kubeconfig"}  # fmt: skip


def _tool_call_for(case: Case, n: int) -> tuple[str, dict[str, object], str]:
    """The tool, its arguments and its result for a tool case."""
    if case.where in ("tool_result", "env_dump"):
        command = case.source or "cat notes.txt"
        return "shell", {"command": command}, case.text
    contexts = {p.context for p in case.plants}
    if ("/" in case.source and " " not in case.source) or contexts & _FILE_CONTEXTS:
        args: dict[str, object] = {"path": case.source or "notes.txt", "content": case.text}
        tool = "write_file"
    elif case.source == "http_request":
        tool, args = "http_request", {"raw": case.text}
    else:
        tool, args = "shell", {"command": case.text}
    if n % 3 == 2:  # some publishers send the arguments once more as a JSON string
        args = {"tool_input": json.dumps(args)}
    return tool, args, "ok: done"


def as_events(cases: Sequence[Case], sessions: int | None = None) -> list[dict[str, object]]:
    """Event bodies (``llm.chat.persist`` and ``llm.tool_call``) carrying every case's text,
    grouped into sessions, each chat event with the whole conversation so far."""
    if not cases:
        return []
    n_sessions = sessions or max(1, min(36, len(cases) // 6))
    groups: list[list[Case]] = [[] for _ in range(n_sessions)]
    for i, case in enumerate(cases):
        groups[i % n_sessions].append(case)
    events: list[dict[str, object]] = []
    for s, group in enumerate(groups):
        sid = f"corpus-session-{s:02d}"
        clock = _START + timedelta(hours=s)
        messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM_PROMPT}]
        for n, case in enumerate(group):
            clock += timedelta(seconds=37)
            event_id = f"{sid}-e{n:03d}"
            base = {
                "event_id": event_id,
                "correlation_id": sid,
                "occurred_at": clock.isoformat().replace("+00:00", "Z"),
            }
            if case.where in ("tool_arguments", "tool_result", "env_dump"):
                tool, args, result = _tool_call_for(case, n)
                payload: dict[str, object] = {
                    "tool": tool,
                    "arguments": args,
                    "result": result,
                    "status": "ok",
                    "duration_ms": 40 + (n * 97) % 900,
                }
                events.append({**base, "subject": "llm.tool_call", "payload": payload})
                continue
            if case.where == "user_turn":
                messages += [
                    {"role": "user", "content": case.text},
                    {"role": "assistant", "content": f"Looking into it (step {n + 1})."},
                ]
            elif case.where == "assistant_turn":
                messages += [
                    {"role": "user", "content": f"What did you find in step {n + 1}?"},
                    {"role": "assistant", "content": case.text},
                ]
            else:  # reasoning
                messages += [
                    {"role": "user", "content": f"Go ahead with step {n + 1}."},
                    {
                        "role": "assistant",
                        "content": f"Done with step {n + 1}, moving on.",
                        "reasoning_content": case.text,
                    },
                ]
            payload = {
                "messages": [dict(m) for m in messages],
                "model": "qwen2.5-coder-7b-instruct",
                "slot": "slot-a",
            }
            events.append({**base, "subject": "llm.chat.persist", "payload": payload})
    return events
