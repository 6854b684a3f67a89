"""The pipeline against real llama.cpp ``llama-server`` processes serving a tiny local GGUF:
the system tests."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from model_foundry.devtools import llama_server
from model_foundry.devtools.ports import free_port
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import load_slot_file
from model_foundry.lib.slots.dispatcher import RetryPolicy, Task, run_dispatch
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.real_llama import (  # noqa: F401 - fixtures are found by name
    CTX,
    PER_REQUEST,
    get_json,
    llama_slot_file,
    metrics,
    trio_fixture,
)
from model_foundry_tests.slot_fixtures import fast_options, write_yaml
from model_foundry_tests.tiers import REPO_ROOT

PROMPTS = 32

pytestmark = pytest.mark.timeout(600)


def _pipeline_env(tmp_path: Path, slot_path: Path) -> dict[str, str]:
    from model_foundry_tests.pipeline_helpers import clean_env

    return clean_env(
        MODEL_FOUNDRY_SLOTS=str(slot_path),
        MODEL_FOUNDRY_DATA_DIR=str(tmp_path / "data"),
        PYTHONPATH=str(REPO_ROOT),
    )


def test_every_demo_session_gets_a_summary_and_a_translation(
    trio: dict[str, Any], tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=540,
        env=_pipeline_env(tmp_path, trio["path"]),
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    db = tmp_path / "data" / "demo" / "model_foundry.duckdb"
    with duckdb.connect(str(db), read_only=True) as con:
        sessions = con.execute(
            "SELECT count(DISTINCT correlation_id) FROM chat_messages"
        ).fetchone()
        summarised = con.execute(
            "SELECT count(DISTINCT correlation_id) FROM session_summaries"
        ).fetchone()
        translated = con.execute(
            "SELECT count(*) FROM session_summaries s WHERE EXISTS "
            "(SELECT 1 FROM session_summary_translations t WHERE t.summary_key = s.request_key)"
        ).fetchone()
        summaries = con.execute("SELECT count(*) FROM session_summaries").fetchone()
        # No request whose latest attempt failed: nothing pending, nothing recorded too long.
        pending_errors = con.execute(
            """
            SELECT count(*) FROM (
                SELECT request_key,
                           arg_max(status, epoch_us(recorded_at) * 1000 + attempt)
                               AS last_status
                FROM llm_completions
                WHERE task IN ('session_summary', 'session_summary_part',
                               'session_summary_translation')
                GROUP BY request_key
            ) WHERE last_status <> 'ok'
            """
        ).fetchone()
        parts = con.execute("SELECT count(*) FROM session_summary_parts").fetchone()
        longest = con.execute(
            "SELECT max(prompt_tokens) FROM llm_completions WHERE status = 'ok'"
        ).fetchone()
    assert sessions[0] >= 4 and summarised[0] == sessions[0], result.stdout[-3000:]
    assert translated[0] == summaries[0]
    assert pending_errors[0] == 0
    # The demo's sessions do not fit 1024 tokens: they were summarised in parts.
    assert parts[0] > sessions[0]
    assert longest[0] <= PER_REQUEST


def _long_session_events(n_messages: int, session: str) -> list[Any]:
    from model_foundry.lib.publish import make_event

    events = []
    for i in range(0, n_messages, 2):
        payload = {
            "messages": [
                {"role": "user", "content": f"Step {i}: please check the DuckDB writer again."},
                {"role": "assistant", "content": f"Step {i}: done, the writer is fine now."},
            ],
            "model": "m",
            "slot": "s",
        }
        events.append(make_event("llm.chat.persist", payload, session))
    return events


def test_a_300_message_session_is_summarised_in_parts_and_reruns_only_what_changed(
    trio: dict[str, Any], tmp_path: Path, nats_client: Any, db_path: Path
) -> None:
    import dagster as dg

    from model_foundry.defs.inbox_tables.assets import inbox_tables
    from model_foundry.defs.resources import FoundryDuckDB, NatsResource, SlotsResource
    from model_foundry.defs.summaries.assets import session_summaries
    from model_foundry_tests.nats_helpers import publish
    from model_foundry_tests.pipeline_helpers import drain_inbox

    events = _long_session_events(300, "long-session")
    publish(nats_client, events)
    res = {
        "nats": NatsResource.of(nats_client),
        "duckdb": FoundryDuckDB(database=str(db_path)),
        "slots": SlotsResource(slot_file=str(trio["path"])),
    }

    def summarise() -> dict[str, Any]:
        result = dg.materialize([inbox_tables, session_summaries], resources=res, instance=instance)
        assert result.success
        mats = result.asset_materializations_for_node("session_summaries")
        return {k: v.value for k, v in mats[0].metadata.items()}

    with quiet_instance() as instance:
        drain_inbox(res, instance)
        first = summarise()
        assert first["summaries_written"] == 1 and first["sessions_chunked"] == 1
        assert first["reduce_levels"] >= 2 and first["failed"] == 0
        with duckdb.connect(str(db_path), read_only=True) as con:
            level1 = con.execute(
                "SELECT count(*), min(first_item), max(last_item) FROM session_summary_parts "
                "WHERE level = 1"
            ).fetchone()
        assert level1[0] > 1 and level1[1] == 1 and level1[2] == 300

        # Ten more messages: the earlier parts are the same requests, answered from the store.
        publish(nats_client, _long_session_events(10, "long-session"))
        drain_inbox(res, instance)
        second = summarise()
    assert second["summaries_written"] == 1
    assert second["reused_from_store"] >= level1[0] - 2
    assert second["sent"] < first["sent"] / 2


def test_dataset_job_keeps_every_slot_full_and_never_defers(
    llama_server_bin: Path, paced_model: Path, tmp_path: Path
) -> None:
    """The bar: `/slots` shows every slot processing in >= 95% of samples taken while work
    remains, and `llamacpp:requests_deferred` stays 0 (the dispatcher never overfills)."""
    with llama_server.running(
        llama_server_bin, paced_model, ctx=CTX, parallel=5, log_dir=tmp_path
    ) as server:
        data = llama_slot_file({"naughty": server, "kindergarten": server}, max_tokens=600)
        data["profiles"]["standard"] = ["kindergarten"]
        path = write_yaml(tmp_path / "one.yaml", data)
        prompts = tmp_path / "prompts"
        prompts.mkdir()
        with (prompts / "p.jsonl").open("w") as f:
            for i in range(PROMPTS):
                f.write(json.dumps({"id": f"p{i}", "prompt": f"Question {i}: the data?"}) + "\n")
        samples: list[tuple[int, float]] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                slots = get_json(f"{server.url}/slots")
                busy = sum(1 for s in slots if s.get("is_processing"))
                deferred = metrics(server.url).get("llamacpp:requests_deferred", 0.0)
                samples.append((busy, deferred))
                time.sleep(0.02)

        env = {**_pipeline_env(tmp_path, path), "MODEL_FOUNDRY_DUCKDB": str(tmp_path / "d.db")}
        sampler = threading.Thread(target=sample, daemon=True)
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "model_foundry.cli", "dataset", "collect", "--name", "full",
                "--prompt-dir", str(prompts), "--no-chat-sessions", "--roles", "kindergarten",
            ],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        sampler.start()
        out, err = proc.communicate(timeout=480)
        stop.set()
        sampler.join(5)
    assert proc.returncode == 0, out[-2000:] + err[-3000:]
    meta = json.loads(out.strip().splitlines()[-1])
    assert meta["samples_written"] == PROMPTS
    assert max(d for _, d in samples) == 0
    # Samples while work remained: from the first busy slot until the last wave began
    # (the requests over 5 slots end in a partial wave the slots cannot fill).
    first = next(i for i, (b, _) in enumerate(samples) if b > 0)
    last_full = max(i for i, (b, _) in enumerate(samples) if b == 5)
    window = samples[first : last_full + 1]
    full = sum(1 for b, _ in window if b == 5)
    print(f"every slot processing in {full} of {len(window)} samples")
    assert len(window) >= 20, len(window)
    assert full / len(window) >= 0.95, (full, len(window))


def test_a_server_restarted_mid_job_loses_nothing(
    llama_server_bin: Path, tiny_model: Path, tmp_path: Path
) -> None:
    port = free_port()
    server = llama_server.start(
        llama_server_bin, tiny_model, ctx=CTX, parallel=5, log_dir=tmp_path, port=port
    )
    data = llama_slot_file({"naughty": server, "kindergarten": server}, max_tokens=400)
    data["profiles"]["standard"] = ["kindergarten"]
    sf = load_slot_file(write_yaml(tmp_path / "one.yaml", data))
    tasks = [
        Task(f"t{i}", "t", "kindergarten", Body(messages=[{"role": "user", "content": f"q{i}"}]))
        for i in range(40)
    ]
    done: list[str] = []

    def restart_after_some() -> None:
        while len(done) < 8:
            time.sleep(0.01)
        server.stop()
        time.sleep(1.0)
        restarted.append(
            llama_server.start(
                llama_server_bin, tiny_model, ctx=CTX, parallel=5, log_dir=tmp_path, port=port
            )
        )

    restarted: list[llama_server.LlamaServer] = []
    killer = threading.Thread(target=restart_after_some, daemon=True)
    killer.start()
    options = fast_options(
        tmp_path,
        # Retries span a minute: the restart (stop, 1 s, load the model, pass /health) takes
        # a few seconds on a busy 2-core machine, and only its effect is under test here.
        retry=RetryPolicy(max_attempts=80, backoff_base_s=0.2, backoff_max_s=1.0),
        failures_before_cooldown=100,
        stop_error_share=1.0,
    )
    try:
        result = run_dispatch(
            tasks, sf, "standard", on_attempt=lambda a: a.ok and done.append(a.key), options=options
        )
    finally:
        killer.join(30)
        for s in [server, *restarted]:
            s.stop()
    assert restarted, "the server was never restarted"
    assert result.ok_count == 40 and not result.undone
    failed_attempts = [a for a in result.attempts if not a.ok]
    assert failed_attempts, "the restart cost no request: it did not happen mid-job"
    assert all(a.retryable for a in failed_attempts)
