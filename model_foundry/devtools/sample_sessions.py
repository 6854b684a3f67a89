"""Realistic agent conversations for the sample events: tool calls, schemas, reasoning.

Each session has two workers, each working through tasks; a task is one conversation (a
system prompt, the task, then LLM calls that either call tools or answer). Tools run as soon
as they are called, so their results are in the conversation the next call persists and a
``llm.tool_call`` event reports each run. Sessions differ in how they persist:

- ``whole``: every call sends the conversation so far (the familiar's default);
- ``new``: every call sends only the turns added since the last one, naming its ``worker``.

A few tasks and tool results hold planted fake secrets and personal data (tokens, a database
URL with a password, an e-mail address, a home folder, a private IP), so the dataset hygiene
has something to find; they are random strings, never real credentials.
"""

from __future__ import annotations

import json
import random
import string
from collections import deque
from dataclasses import dataclass, field
from typing import Any

SYSTEM_PROMPT = (
    "You are a coding agent working in the lab's repository. Use the tools to read and "
    "change files and to run the tests; answer briefly when the task is done."
)

TOOLS_SCHEMA: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }
    for name, description, properties, required in [
        (
            "read_file",
            "Read a file of the repository.",
            {"path": {"type": "string"}, "max_lines": {"type": "integer"}},
            ["path"],
        ),
        (
            "run_tests",
            "Run pytest on a path.",
            {"path": {"type": "string"}, "timeout": {"type": ["integer", "string"]}},
            ["path"],
        ),
        ("grep", "Search the repository.", {"pattern": {"type": "string"}}, ["pattern"]),
        ("git_diff", "Show the working tree's diff.", {}, []),
    ]
]

_TASKS = [
    "Refactor the DuckDB writer in model_foundry/module_{n}.py so each batch commits once.",
    "The sensor in module_{n}.py requests a run with nothing pending; find out why and fix it.",
    "Add type hints to the public functions of model_foundry/module_{n}.py.",
    "Make the tests in module_{n} pass again; they broke after the last merge.",
    "Explain what model_foundry/module_{n}.py does, in three sentences.",
]
_JA_TASKS = [
    "このログの要点を三行でまとめてください。",
    "DuckDB のロック競合を避ける方法を教えてください。",
    "次の関数に型ヒントを追加してください。",
    "セッションの要約を日本語で書いてください。",
]
_JA_ANSWERS = [
    "要点: 取り込み、検証、保存の三段階です。",
    "書き込みを短いトランザクションに分け、失敗時は再試行します。",
    "型ヒントを追加しました。戻り値は dict です。",
]
_FOLLOW_UPS = [
    "Also run the tests of the neighbouring module.",
    "Good. Can you check the diff once more before we stop?",
    "Keep the public names; only the internals may change.",
]
_ANSWERS = [
    "Done: the writer opens, writes one batch, commits and closes; the tests pass.",
    "It counted acknowledged-pending messages; only undelivered ones trigger a run now.",
    "Type hints added; every public function returns a dataclass or a dict.",
    "The module drains the inbox, validates each event and stores it in one transaction.",
]
_THOUGHTS = [
    "The task names one module; reading it first is cheaper than grepping the whole tree.",
    "The tests are the quickest way to see whether the change holds.",
    "A diff before answering shows nothing unrelated slipped in.",
]
CALLS_PER_TASK = 6


def _random(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def planted_secrets(rng: random.Random) -> dict[str, str]:
    """One fake value of each planted kind, random so no rule can treat it as a placeholder."""
    alnum = string.ascii_letters + string.digits
    return {
        "github_token": "ghp_" + _random(rng, alnum, 36),
        "openai_api_key": "sk-proj-" + _random(rng, alnum, 40),
        "aws_access_key_id": "AKIA" + _random(rng, string.ascii_uppercase + "234567", 16),
        "huggingface_token": "hf_" + _random(rng, alnum, 34),
        "db_password": _random(rng, string.ascii_lowercase + string.digits, 14),
        "email": f"{rng.choice(['akira.tanaka', 'maria.lopez', 'sam.okafor'])}@labmail.net",
        "home_user": rng.choice(["akira", "mlopez", "sokafor"]),
        "ip": f"10.{rng.randint(1, 254)}.{rng.randint(1, 254)}.{rng.randint(2, 254)}",
    }


@dataclass
class ToolRun:
    """A tool call an assistant made and what running it gave, for its llm.tool_call event."""

    name: str
    arguments: dict[str, Any]
    result: str
    status: str
    call_id: str


@dataclass
class Worker:
    """One worker's current conversation, advanced one LLM call at a time."""

    session: str
    name: str
    rng: random.Random
    secrets: dict[str, str] | None
    task: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)
    sent: int = 0
    calls: int = 0
    runs: deque[ToolRun] = field(default_factory=deque)
    japanese: bool = False

    def _start_task(self) -> None:
        self.japanese = self.rng.random() < 0.4
        tasks = _JA_TASKS if self.japanese else _TASKS
        task = self.rng.choice(tasks).format(n=self.rng.randint(0, 6))
        if self.secrets and self.task == 0:
            s = self.secrets
            task += (
                f" The staging box is {s['ip']}; my checkout is /home/{s['home_user']}/lab. "
                f"Mail {s['email']} when done. CI uses HF_TOKEN={s['huggingface_token']}."
            )
        self.messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task},
        ]
        self.sent = 0
        self.calls = 0
        self.task += 1

    def _result(self, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
        if name == "read_file" and self.secrets and self.calls == 1:
            s = self.secrets
            return (
                f"# .env\nOPENAI_API_KEY={s['openai_api_key']}\n"
                f"DATABASE_URL=postgres://lab:{s['db_password']}@db.internal:5432/foundry\n"
                f"AWS_ACCESS_KEY_ID={s['aws_access_key_id']}\n",
                "ok",
            )
        if name == "run_tests":
            if self.rng.random() < 0.25:
                return (
                    "FAILED tests/test_module.py::test_commit - AssertionError\nexit status 1",
                    "error",
                )
            return f"{self.rng.randint(3, 40)} passed in {self.rng.random() * 9:.2f}s", "ok"
        if name == "git_diff":
            token = self.secrets["github_token"] if self.secrets else "none"
            return (
                f"remote: https://x-access-token:{token}@github.com/lab/foundry.git\n"
                " 2 files changed",
                "ok",
            )
        path = arguments.get("path") or arguments.get("pattern")
        return f"def handle(batch):\n    # {path}\n    return store(batch)\n", "ok"

    def _tool_calls(self) -> list[dict[str, Any]]:
        module = f"model_foundry/module_{self.rng.randint(0, 6)}.py"
        # Argument keys and types differ between calls, as real agents send them.
        choices: list[tuple[str, dict[str, Any]]] = [
            ("read_file", {"path": module}),
            ("read_file", {"path": module, "max_lines": self.rng.choice([80, 200])}),
            ("run_tests", {"path": "tests/", "timeout": self.rng.choice([60, "60s"])}),
            ("grep", {"pattern": "def commit"}),
            ("git_diff", {}),
        ]
        picked = [self.rng.choice(choices) for _ in range(self.rng.choice([1, 1, 2]))]
        calls = []
        for name, arguments in picked:
            call_id = f"call_{self.rng.getrandbits(48):012x}"
            result, status = self._result(name, arguments)
            self.runs.append(ToolRun(name, arguments, result, status, call_id))
            calls.append((call_id, name, arguments, result))
        return [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for call_id, name, arguments, _ in calls
        ]

    def next_call(self, reasoning_key: str | None) -> list[dict[str, Any]]:
        """The messages this call adds (tool results of the last call, the new reply)."""
        if not self.messages or self.calls >= CALLS_PER_TASK:
            self._start_task()
        elif self.messages[-1]["role"] == "assistant" and not self.messages[-1].get("tool_calls"):
            self.messages.append({"role": "user", "content": self.rng.choice(_FOLLOW_UPS)})
        self.calls += 1
        reply: dict[str, Any] = {"role": "assistant"}
        if self.calls < CALLS_PER_TASK and self.rng.random() < 0.7:
            reply["content"] = None
            reply["tool_calls"] = self._tool_calls()
        else:
            reply["content"] = self.rng.choice(_JA_ANSWERS if self.japanese else _ANSWERS)
        if reasoning_key:
            reply[reasoning_key] = self.rng.choice(_THOUGHTS)
        self.messages.append(reply)
        for call in reply.get("tool_calls", []):
            run = next(r for r in self.runs if r.call_id == call["id"])
            self.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": run.call_id,
                    "name": run.name,
                    "content": run.result,
                }
            )
        return self.messages

    @property
    def thread_id(self) -> str:
        return f"{self.name}/task-{self.task}"

    def persisted(self, style: str) -> list[dict[str, Any]]:
        """The messages this call's event carries: all so far, or those not yet sent. Tool
        results are sent with the next call, after the tools ran."""
        upto = max(i for i, m in enumerate(self.messages) if m["role"] == "assistant") + 1
        start = 0 if style == "whole" else self.sent
        self.sent = upto
        return [dict(m) for m in self.messages[start:upto]]


__all__ = [
    "CALLS_PER_TASK",
    "SYSTEM_PROMPT",
    "TOOLS_SCHEMA",
    "ToolRun",
    "Worker",
    "planted_secrets",
]
