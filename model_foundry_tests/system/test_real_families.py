"""Families on the real Gemma 3 270M weights: what llama-server itself reports as reused
(``timings.cache_n``, stored as ``cached_prompt_tokens``) when the dispatcher sends the
samples of one prompt one after another in the server slot that holds it, against the plain
order, in which siblings run at once in different server slots and share nothing.

One server serves the module (``--parallel 2``, one thread, short answers); each test erases
its slots first (``POST /slots/{id}?action=erase``, which needs ``--slot-save-path``), so no
slot holds anything of what the test sends, and every prompt is the test's own.
"""

from __future__ import annotations

import json
import logging
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
import yaml

from model_foundry.devtools import llama_server, real_model
from model_foundry.devtools.bench.prefill import BenchSlots
from model_foundry.lib.llm import Body, LlmRun, Request

pytestmark = pytest.mark.timeout(300)

PARALLEL = 2


@pytest.fixture(scope="module")
def gemma(
    llama_server_bin: Path, gemma_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[llama_server.LlamaServer]:
    saves = tmp_path_factory.mktemp("slot-saves")
    with real_model.serving(
        llama_server_bin,
        gemma_model,
        log_dir=tmp_path_factory.mktemp("gemma-families"),
        ctx=PARALLEL * 1024,
        parallel=PARALLEL,
        extra=["--threads", "1", "--slot-save-path", str(saves)],
    ) as server:
        yield server


def erase_slots(server: llama_server.LlamaServer) -> None:
    for i in range(PARALLEL):
        request = urllib.request.Request(
            f"{server.url}/slots/{i}?action=erase", data=b"{}", method="POST"
        )
        with urllib.request.urlopen(request, timeout=60) as resp:
            assert json.loads(resp.read())["id_slot"] == i


def slot_file(server: llama_server.LlamaServer, path: Path) -> Path:
    slot = {
        "roles": ["worker"], "runtime": "llamacpp", "base_url": server.base_url,
        "model": "gemma3-270m-q4_k_m", "parallel": PARALLEL, "api": "chat",
        # Answers of one length, so requests end in the order they started.
        "request_defaults": {"max_tokens": 6, "temperature": 0.7,
                             "extra_body": {"ignore_eos": True}},
        "timeouts": {"connect_s": 5, "request_s": 300},
    }  # fmt: skip
    data = {"default_profile": "p", "slots": {"naughty": slot}, "profiles": {"p": ["naughty"]}}
    path.write_text(yaml.safe_dump(data))
    return path


def notes(topic: str) -> list[dict[str, str]]:
    """A prompt of about 250 tokens of its own, from its first word on."""
    body = " ".join(f"{topic} note {i}: the writer kept batch {i} of {topic}." for i in range(20))
    return [{"role": "user", "content": f"{body}\n\nWhat did the writer keep?"}]


def ask(
    server: llama_server.LlamaServer, tmp_path: Path, requests: list[Request], *, families: bool
) -> dict[str, list[tuple[int, int]]]:
    """``requests`` through the pipeline; each family's (prompt, cached) tokens by start."""
    source = BenchSlots(
        slot_file(server, tmp_path / "slots.yaml"), families=families, lock_dir=tmp_path / "locks"
    )
    db = tmp_path / "mf.duckdb"
    log = logging.getLogger("test")
    with LlmRun(db, source, run_id=None, asset="test", log=log) as run:
        planned = [run.plan(r) for r in requests]
        batch = run.ask(planned, "test")
    assert not batch.failed, batch.failure_causes()
    family = {p.key: p.request.family or "none" for p in planned}
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT request_key, prompt_tokens, cached_prompt_tokens FROM llm_completions "
            "WHERE status = 'ok' ORDER BY started_at"
        ).fetchall()
    out: dict[str, list[tuple[int, int]]] = {}
    for key, prompt, cached in rows:
        out.setdefault(family[key], []).append((prompt, cached))
    return out


def samples(topic: str, k: int, family: str | None) -> list[Request]:
    return [
        Request("sample", "worker", Body(messages=notes(topic)), {"seed": i}, family=family)
        for i in range(k)
    ]


def test_family_members_after_the_first_reuse_its_prefix(
    gemma: llama_server.LlamaServer, tmp_path: Path
) -> None:
    erase_slots(gemma)
    # Three samples of one prompt; four other prompts keep the other place busy meanwhile, so
    # no member has to run beside the first rather than leave a place idle.
    others = [r for t in ("otter", "heron", "finch", "stoat") for r in samples(t, 1, t)]
    got = ask(gemma, tmp_path, [*samples("lighthouse", 3, "lh"), *others], families=True)

    (first_prompt, first_cached), *rest = got["lh"]
    assert first_cached == 0  # erased: the first member computes its whole prompt
    assert len(rest) == 2
    for prompt, cached in rest:
        assert prompt == first_prompt
        # The server slot that ran the first member holds the whole prompt: all but the last
        # token ("need to evaluate at least 1 token").
        assert cached == prompt - 1 > 0, got


def test_siblings_sent_at_once_share_nothing(
    gemma: llama_server.LlamaServer, tmp_path: Path
) -> None:
    erase_slots(gemma)
    got = ask(gemma, tmp_path, samples("windmill", PARALLEL, "wm"), families=False)

    siblings = got["wm"]
    assert len(siblings) == PARALLEL
    # The plain order: both at once, each in a server slot of its own, each computing all.
    assert [cached for _, cached in siblings] == [0] * PARALLEL, siblings
