"""The pipeline against real llama.cpp ``llama-server`` processes serving a tiny local GGUF.

``-c 4096 --parallel 5`` leaves 1024 tokens a request (llama.cpp rounds the split), the same
limit a user's long sessions ran into. The model has random weights: answers are word salad,
but the server's context limits, tokenizer, ``timings``, ``/slots`` and ``/metrics`` are the
real ones, and those are what these tests are about.

What the unit, integration and system tests of ``test_real_llama.py`` share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from model_foundry.devtools import llama_server
from model_foundry.lib.slots.config import load_slot_file
from model_foundry_tests.real_llama import CTX, llama_slot_file
from model_foundry_tests.slot_fixtures import write_yaml
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT


PER_REQUEST = 1024  # what /props reports for -c 4096 --parallel 5


PROMPTS = 32


@pytest.fixture(name="trio")
def trio_fixture(
    llama_server_bin: Path, tiny_model: Path, tmp_path: Path
) -> Iterator[dict[str, Any]]:
    """The shipped slot file's shape on three real servers: chat x3, chat x5, plamo x1."""
    with ExitStack() as stack:
        servers = {
            name: stack.enter_context(
                llama_server.running(
                    llama_server_bin, tiny_model, ctx=CTX, parallel=n, log_dir=tmp_path
                )
            )
            for name, n in (("naughty", 3), ("kindergarten", 5), ("translator", 1))
        }
        data = llama_slot_file(servers)
        path = write_yaml(tmp_path / "llama-slots.yaml", data)
        yield {"servers": servers, "path": path, "slot_file": load_slot_file(path)}
