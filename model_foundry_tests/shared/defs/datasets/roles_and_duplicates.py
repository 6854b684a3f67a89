"""Dataset collection with two roles on one slot, duplicate prompts, and slots that reject all.

Through the CLI as a user runs it (a real process), the slot simulator over real HTTP and a
real DuckDB file.

What the unit, integration and system tests of
``defs/datasets/test_roles_and_duplicates.py`` share."""

from __future__ import annotations

from model_foundry.lib.datasets.prompts import PromptRecord


def prompt(pid: str, text: str, source: str = "file:a.jsonl") -> PromptRecord:
    return PromptRecord(pid, source, [{"role": "user", "content": text}])
