"""The real Gemma 3 270M weights on the portable llama-server build, with the project's Gemma
chat template: the check ``make real-model`` runs, what the template does to a conversation,
and the pipeline's own code where what a real model writes matters (the template check, the
judge's verdicts, map/reduce summaries, the quality gates). One server with the project's
template serves the module, and one started with ``--chat-template gemma`` (a template that
ignores the messages); answers are a few tokens at temperature 0 with a fixed seed, and no
test asserts the model's wording."""

from __future__ import annotations

import copy
import json
import logging
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from model_foundry.defs.resources import SlotsResource
from model_foundry.devtools import llama_server, real_demo, real_model
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.gates.answers import gate
from model_foundry.lib.gates.config import CAUSES, GateConfig
from model_foundry.lib.gates.script import script_share
from model_foundry.lib.llm import Body, CompletionStore, LlmRun, Request
from model_foundry.lib.llm import request as llm_request
from model_foundry.lib.llm.answer import answer
from model_foundry.lib.llm.causes import failure_causes
from model_foundry.lib.recipes.judged import judge as judge_version
from model_foundry.lib.recipes.llm_cells import recipe_task
from model_foundry.lib.recipes.roles import JudgeSlots
from model_foundry.lib.slots.config import load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.runtimes.shapes import KEEPALIVE_EXPIRY_S
from model_foundry.lib.slots.template_check import (
    PROBE_SYSTEM,
    PROBE_USER,
    TEMPLATE_IGNORES_MESSAGES,
)
from model_foundry.lib.summaries.mapreduce import summarise_sessions
from model_foundry.lib.summaries.pending import SessionToSummarise, SummaryToTranslate
from model_foundry.lib.summaries.prompts import ChatLine
from model_foundry.lib.summaries.translations import Translations
from model_foundry.lib.tables.datasets import DatasetSampleRow
from model_foundry_tests.pipeline_helpers import clean_env
from model_foundry_tests.real_llama import gemma_server, metrics
from model_foundry_tests.recipe_helpers import PAIRWISE, QUESTIONS, generate, write_recipe
from model_foundry_tests.slot_fixtures import fast_options, write_yaml

pytestmark = pytest.mark.timeout(300)


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as resp:
        return json.loads(resp.read())


def _tokens(url: str, text: str, *, add_special: bool) -> list[int]:
    return _post(f"{url}/tokenize", {"content": text, "add_special": add_special})["tokens"]


@pytest.fixture(scope="module")
def gemma(
    llama_server_bin: Path, gemma_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[llama_server.LlamaServer]:
    with gemma_server(
        llama_server_bin, gemma_model, log_dir=tmp_path_factory.mktemp("gemma")
    ) as server:
        yield server


@pytest.fixture(scope="module")
def broken(
    llama_server_bin: Path, gemma_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[llama_server.LlamaServer]:
    """The real weights behind a template that ignores the messages: the trap of this build,
    the built-in template's name taken for a template's text."""
    with llama_server.running(
        llama_server_bin,
        gemma_model,
        ctx=1024,
        parallel=1,
        log_dir=tmp_path_factory.mktemp("broken"),
        extra=["--chat-template", "gemma", "--threads", "1"],
    ) as server:
        yield server


def _slot(
    server: llama_server.LlamaServer, *, roles: list[str], parallel: int = 2, **defaults: Any
) -> dict[str, Any]:
    """A chat slot on ``server`` as the real demo writes one, with ``defaults`` for its
    requests; generous timeouts, since the cores are shared with the rest of the suite."""
    return {
        "roles": roles,
        "runtime": "llamacpp",
        "base_url": server.base_url,
        "model": "gemma3-270m-q4_k_m",
        "parallel": parallel,
        "api": "chat",
        "request_defaults": {"temperature": 0, **defaults},
        "timeouts": {"connect_s": 5, "request_s": 300},
    }


def _slot_file(path: Path, slots: dict[str, dict[str, Any]]) -> Path:
    return write_yaml(
        path, {"default_profile": "standard", "slots": slots, "profiles": {"standard": list(slots)}}
    )


def test_the_build_steps_check_passes_on_the_portable_build(
    gemma: llama_server.LlamaServer,
) -> None:
    result = real_model.check_serving(gemma.url)

    assert PROBE_SYSTEM in result.rendered
    assert PROBE_USER in result.rendered
    assert abs(result.prompt_tokens - result.tokenized) <= real_model.SPECIAL_TOKEN_SLACK
    assert result.completion_tokens >= 1


def test_a_system_message_reaches_gemma_inside_the_first_user_turn(
    gemma: llama_server.LlamaServer,
) -> None:
    system = "Answer as a lighthouse keeper would."
    user = "What do you watch for at night?"
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]

    rendered = _post(f"{gemma.url}/apply-template", {"messages": messages})["prompt"]
    reply = _post(
        f"{gemma.url}/v1/chat/completions",
        {"messages": messages, "max_tokens": 4, "temperature": 0, "seed": 0},
    )

    # Gemma has no system role: the system text opens the user's turn, before the question.
    turn = f"<start_of_turn>user\n{system}\n\n{user}<end_of_turn>\n"
    assert rendered == turn + "<start_of_turn>model\n"
    with_special = _tokens(gemma.url, rendered, add_special=True)
    without = _tokens(gemma.url, rendered, add_special=False)
    # The server adds exactly one BOS, and the template none: no doubled BOS.
    assert len(with_special) == len(without) + 1
    assert reply["usage"]["prompt_tokens"] == len(with_special)


def test_the_template_renders_a_conversation_as_llama_cpps_built_in_gemma_format(
    gemma: llama_server.LlamaServer, llama_server_bin: Path, gemma_model: Path, tmp_path: Path
) -> None:
    # Two system messages, an earlier model turn and untrimmed text: every rule of the
    # built-in format (LLM_CHAT_TEMPLATE_GEMMA) has something to do.
    conversation = [
        {"role": "system", "content": "  Reply in one word. "},
        {"role": "user", "content": "Name a tide.\n"},
        {"role": "assistant", "content": " Spring"},
        {"role": "system", "content": "Lower case only."},
        {"role": "user", "content": "Another?"},
    ]
    ours = _post(f"{gemma.url}/apply-template", {"messages": conversation})["prompt"]
    # --no-jinja: the built-in C++ template by its name, the source the file was written from.
    with llama_server.running(
        llama_server_bin,
        gemma_model,
        ctx=512,
        parallel=1,
        log_dir=tmp_path,
        extra=["--no-jinja", "--chat-template", "gemma"],
    ) as built_in:
        theirs = _post(f"{built_in.url}/apply-template", {"messages": conversation})["prompt"]

    assert ours == theirs
    assert "<start_of_turn>model\nSpring<end_of_turn>" in ours


def test_the_check_refuses_a_server_whose_template_ignores_the_messages(
    broken: llama_server.LlamaServer,
) -> None:
    with pytest.raises(real_model.ModelBroken, match="ignores the messages"):
        real_model.check_serving(broken.url, who="slot kindergarten")


def _prompt_tokens(server: llama_server.LlamaServer) -> float:
    return metrics(server.url).get("llamacpp:prompt_tokens_total", 0.0)


def _slots_check(slot_file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", "slots", "check"],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(
            MODEL_FOUNDRY_SLOTS=str(slot_file), PYTHONPATH=str(Path(__file__).parents[2])
        ),
    )


def test_the_pipeline_refuses_a_real_weights_slot_whose_template_ignores_the_messages(
    broken: llama_server.LlamaServer, gemma: llama_server.LlamaServer, tmp_path: Path
) -> None:
    """The slot alone serves its role: plan, fit and answer store no answer, send nothing to
    the server, and record each request with the one sentence naming the slot."""
    path = _slot_file(
        tmp_path / "slots.yaml", {"kindergarten": _slot(broken, roles=["summary"], max_tokens=8)}
    )
    sf = load_slot_file(path)
    system = {"role": "system", "content": "Summarise the session for its operator."}
    requests = [
        llm_request.plan(
            Request("t", "summary", Body(messages=[system, {"role": "user", "content": q}])), sf
        )
        for q in ("The writer was fixed.", "A test failed twice.", "Nothing is left open.")
    ]
    db = tmp_path / "mf.duckdb"
    before = _prompt_tokens(broken)
    with ContextBook(sf.live_slots()) as book:
        fitted = llm_request.fit(requests, book, sf)
    batch = answer(CompletionStore(db), fitted, sf, options=fast_options(tmp_path / "locks"))
    after = _prompt_tokens(broken)

    assert after == before, "a request reached the refused slot"
    assert not batch.results and len(batch.failed) == 3
    causes = failure_causes(batch.unfit_attempts)
    assert list(causes.values()) == [3]
    (cause,) = causes
    assert cause.startswith("slot kindergarten: its chat template ignores the messages: ")
    assert "\n" not in cause.strip() and "Traceback" not in cause
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute(
            "SELECT status, error_class, count(*) FROM llm_completions GROUP BY ALL"
        ).fetchall()
    assert stored == [("error", TEMPLATE_IGNORES_MESSAGES, 3)]
    # The counter the first assertion reads does count this server's prompts: a request sent
    # past the pipeline moves it.
    _post(f"{broken.url}/v1/chat/completions", {"messages": [system], "max_tokens": 1})
    assert _prompt_tokens(broken) > after

    refused = _slots_check(path)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "REFUSED: slot kindergarten: its chat template ignores the messages" in refused.stdout
    assert "Traceback" not in refused.stderr

    good = _slots_check(
        _slot_file(tmp_path / "good.yaml", {"kindergarten": _slot(gemma, roles=["summary"])})
    )
    assert good.returncode == 0, good.stdout + good.stderr
    assert "keeps the messages" in good.stdout and "REFUSED" not in good.stdout


def _sample(key: str, prompt_id: str, slot: str, question: str, response: str) -> DatasetSampleRow:
    return DatasetSampleRow(
        dataset="d", version="v", request_key=key, prompt_id=prompt_id, source="file",
        role=slot, sample_index=0,
        messages=json.dumps([{"role": "user", "content": question}]), prompt=question,
        response=response, reasoning=None, slot=slot, model=f"model-{slot}", params="{}",
        prompt_tokens=8, completion_tokens=8, finish_reason="stop", is_empty=False,
        is_truncated=False, run_id=None,
    )  # fmt: skip


def test_judge_verdicts_parse_under_the_schema_on_real_weights(
    gemma: llama_server.LlamaServer, tmp_path: Path
) -> None:
    # How the grammar's free whitespace is kept from eating the verdict: the schema's grammar
    # lets the model put whitespace between the JSON's tokens, and a model that does so runs
    # to max_tokens with the object still open (what the issue saw behind a broken template).
    # The judge column sets max_tokens to one sized to the schema, above the slot's smaller
    # one (verdict_tokens: a reason of REASON_MAX characters at one token each at worst, two
    # scores and the JSON around them, with room for some whitespace); the schema's maxLength
    # bounds the reason, so a base model that loops inside it is still made to close the
    # object; and the right template gives the model the prompt the JSON follows. So every
    # verdict must end by itself ("stop"), never at the limit, though the slot says 64.
    path = _slot_file(
        tmp_path / "slots.yaml",
        {
            "naughty": _slot(gemma, roles=["worker"], max_tokens=8),
            "grandpa": _slot(gemma, roles=[], max_tokens=64),
        },
    )
    db = tmp_path / "judge.duckdb"
    write_samples(
        db,
        [
            _sample("k1-n", "p1", "naughty", "What is a zone map?", "Per-block min and max."),
            _sample("k1-k", "p1", "kindergarten", "What is a zone map?", "A map of zones."),
            _sample("k2-n", "p2", "naughty", "Why vacuum?", "To reclaim deleted rows' space."),
            _sample("k2-k", "p2", "kindergarten", "Why vacuum?", "It cleans the floor."),
        ],
    )
    slots = SlotsResource(slot_file=str(path), limiter="flock")
    with LlmRun(db, JudgeSlots(slots), run_id=None, asset="test", log=logging.getLogger()) as run:
        judged = judge_version(run, "d", "v", "grandpa")
        batch = run.batch

    # One comparison per prompt, both orders: four verdicts.
    assert len(judged.plan.comparisons) == 2
    assert batch.metadata()["failed"] == 0, batch.failure_causes()
    assert len(batch.new_results) == 4
    for done in batch.new_results:
        assert done.slot == "grandpa"
        assert done.finish_reason == "stop", done.content
        verdict = json.loads(done.content)
        assert 1 <= verdict["quality_1"] <= 10 and 1 <= verdict["quality_2"] <= 10
    assert [r.status for r in judged.rows] == ["ok"] * 4


def test_a_session_longer_than_the_slots_context_is_summarised_in_parts(
    llama_server_bin: Path, gemma_model: Path, tmp_path: Path
) -> None:
    window = 512
    with gemma_server(
        llama_server_bin, gemma_model, log_dir=tmp_path, ctx=window, parallel=1
    ) as small:
        path = _slot_file(
            tmp_path / "slots.yaml",
            {"kindergarten": _slot(small, roles=["summary"], parallel=1, max_tokens=32)},
        )
        lines = [
            ChatLine(role, f"Step {i}: {text}")
            for i in range(22)
            for role, text in (
                ("user", "please check the DuckDB writer again."),
                ("assistant", "done, the writer is fine now."),
            )
        ]
        session = SessionToSummarise("long", len(lines), [], None, None, lines)
        db = tmp_path / "mf.duckdb"
        slots = SlotsResource(slot_file=str(path), limiter="flock")
        with LlmRun(db, slots, run_id=None, asset="test", log=logging.getLogger()) as run:
            outcome = summarise_sessions(
                run, [session], role="kindergarten", max_messages=200, max_chars=400
            )

    assert outcome.failed == {}
    (done,) = outcome.summarised
    assert outcome.chunked_sessions == 1 and outcome.levels >= 2
    level1 = [p for p in done.parts if p.level == 1]
    assert 2 <= len(level1) <= 3
    assert level1[0].first == 1 and level1[-1].last == len(lines)
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT status, prompt_tokens, completion_tokens FROM llm_completions"
        ).fetchall()
    # Every part and the reduce were answered, each within the slot's window.
    assert len(rows) == len(done.parts) + 1
    assert all(status == "ok" for status, _, _ in rows), rows
    assert all(p + c <= window for _, p, c in rows), rows


def test_the_quality_gates_fire_on_what_the_real_model_writes(
    gemma: llama_server.LlamaServer, tmp_path: Path
) -> None:
    """No stop and a small max_tokens: a base model runs on, repeats and echoes."""
    path = _slot_file(
        tmp_path / "slots.yaml", {"naughty": _slot(gemma, roles=["worker"], max_tokens=24)}
    )
    sf = load_slot_file(path)
    questions = [
        "List the steps to check a DuckDB file for corruption.",
        "Repeat after me: the writer is fine now.",
        "What does a zone map hold?",
    ]
    planned = [
        llm_request.plan(
            Request(
                "t", "worker", Body(messages=[{"role": "user", "content": q}]), params={"seed": 0}
            ),
            sf,
        )
        for q in questions
    ]
    with ContextBook(sf.live_slots()) as book:
        fitted = llm_request.fit(planned, book, sf)
    batch = answer(
        CompletionStore(tmp_path / "mf.duckdb"),
        fitted,
        sf,
        options=fast_options(tmp_path / "locks", request_timeout_s=300.0),
    )
    assert len(batch.results) == len(questions), batch.failure_causes()
    causes, written = [], []
    by_content = GateConfig(skip=frozenset({"cut_off"}))
    for question, request in zip(questions, planned, strict=True):
        c = batch.results[request.key]
        causes.append(gate(c.content, finish_reason=c.finish_reason, prompt=question))
        # What the model wrote, whatever the token limit did: its own text must trip a gate.
        written.append(gate(c.content, prompt=question, config=by_content))
    fired = [c for c in causes if c is not None]
    assert fired, causes
    assert set(fired) <= set(CAUSES)
    from_text = [c for c in written if c is not None]
    assert from_text, written
    assert set(from_text) <= set(CAUSES) - {"cut_off"}


SUMMARIES = {
    "en": (
        "The nightly backup failed because the disk was full. The user deleted old "
        "snapshots and ran it again.",
        "The model server ran out of memory and was restarted with a smaller context.",
        "The user wanted a summary of the meeting notes.",
    ),
    "ja": (
        "夜間のバックアップはディスクが満杯で失敗しました。",
        "ユーザーはNATSサーバーの再起動方法を尋ね、アシスタントがコマンドを説明しました。",
        "ユーザーは会議のメモの要約を求めました。",
    ),
}


def test_summaries_are_translated_into_the_other_script_on_real_weights(
    gemma: llama_server.LlamaServer, tmp_path: Path
) -> None:
    # A 270M base model given the instruction alone handed it back, in English, every time.
    # The pipeline asks a chat slot with worked examples before the text
    # (client.translation_messages), a pattern such a model follows; what it still gets
    # wrong, the gates hold back as it is stored.
    path = _slot_file(
        tmp_path / "slots.yaml",
        {"translator": _slot(gemma, roles=[], max_tokens=96, stop=real_demo.STOPS["translator"])},
    )
    items = [
        SummaryToTranslate(f"s-{lang}-{i}", f"session-{lang}-{i}", lang, text)
        for lang, texts in SUMMARIES.items()
        for i, text in enumerate(texts)
    ]
    slots = SlotsResource(slot_file=str(path), limiter="flock")
    db = tmp_path / "translations.duckdb"
    with LlmRun(db, slots, run_id=None, asset="test", log=logging.getLogger()) as run:
        outcome = run.work(Translations(), items)

    assert outcome.batch.metadata()["failed"] == 0, outcome.batch.failure_causes()
    assert len(outcome.rows) == len(items)
    target = {"Japanese": "ja", "English": "en"}
    shares = [(r, script_share(r.translation, target[r.target_lang])) for r in outcome.rows]
    for lang in ("Japanese", "English"):
        into = [(r, s) for r, s in shares if r.target_lang == lang]
        # At least one translation each way is mostly in the target's script, and kept.
        assert any(s is not None and s >= 0.5 and r.gate is None for r, s in into), into
    # None that is not is kept: each such one carries the cause it is held back for.
    assert all(r.gate is not None for r, s in shares if s is None or s < 0.5), shares


def test_a_recipe_with_a_pairwise_judge_runs_on_real_weights(
    gemma: llama_server.LlamaServer, tmp_path: Path
) -> None:
    # Two roles answer, the judge compares them in both orders under the verdict schema. The
    # judge slot's default (64 tokens) is below what a verdict needs; the recipe's judge is
    # given its own budget (generate.verdict_tokens), so every verdict ends by itself. The
    # gates are off: a base model's answers are often cut off or echoed, and held back they
    # would leave the judge nothing to compare.
    path = _slot_file(
        tmp_path / "slots.yaml",
        {
            "naughty": _slot(gemma, roles=["worker"], max_tokens=24),
            "kindergarten": _slot(gemma, roles=["cheap"], max_tokens=24),
            "grandpa": _slot(gemma, roles=[], parallel=1, max_tokens=64),
        },
    )
    attributes = {**copy.deepcopy(PAIRWISE), "gates": False}
    # The cheap answer shorter: at temperature 0 the two answers would be the same text, and
    # the judge's two orders one request (the same prompt, asked once).
    attributes["columns"][2]["params"] = {"max_tokens": 12}
    folder = tmp_path / "recipe"
    write_recipe(folder, attributes, seeds=QUESTIONS[:2])
    slots = SlotsResource(slot_file=str(path), limiter="flock")
    db = tmp_path / "recipe.duckdb"

    first = generate(folder, attributes, db, slots).metadata()

    assert first["rows"] == 2 and first["rows_complete"] == 2, first
    # Two answers and the judge's two orders per row.
    assert first["llm_cells_asked"] == 8 and first["llm_cells_unanswered"] == 0, first
    with duckdb.connect(str(db), read_only=True) as con:
        finished = con.execute(
            "SELECT finish_reason, count(*) FROM llm_completions WHERE task = ? "
            "AND status = 'ok' GROUP BY 1",
            [recipe_task("pairwise", "preference")],
        ).fetchall()
        # A failed attempt (a connection dropped under the suite's load) must have been
        # asked again and answered.
        failed = con.execute(
            "SELECT slot, error_class, error FROM llm_completions f WHERE status <> 'ok' "
            "AND NOT EXISTS (SELECT 1 FROM llm_completions o WHERE o.status = 'ok' "
            "AND o.request_key = f.request_key)"
        ).fetchall()
        verdicts = con.execute(
            "SELECT preference_winner, preference_agree, preference_helpful_a, "
            "preference_helpful_b FROM recipe_pairwise"
        ).fetchall()
    assert finished == [("stop", 4)] and failed == [], (finished, failed)
    assert len(verdicts) == 2
    for winner, agree, helpful_a, helpful_b in verdicts:
        assert winner in {"answer", "cheap_answer", "tie"}
        assert isinstance(agree, bool)
        assert 1 <= helpful_a <= 10 and 1 <= helpful_b <= 10
    # Run again: every LLM cell (three a row) is taken from the file, nothing is asked or
    # written.
    again = generate(folder, attributes, db, slots).metadata()
    assert again["llm_cells_asked"] == 0 and again["cells_reused"] == 6, again
    assert again["cells_written"] == 0, again


def test_llama_server_keeps_an_idle_connection_longer_than_a_slot_client_reuses_it(
    gemma: llama_server.LlamaServer,
) -> None:
    # SlotClient lets go of an idle connection after KEEPALIVE_EXPIRY_S, so a request is never
    # sent on one the server is closing (llama-server's keep-alive is 5 s; so was httpx's).
    # The margin only holds while the server keeps the connection past that.
    port = int(gemma.url.rsplit(":", 1)[1])
    ask = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(ask)
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        conn.settimeout(KEEPALIVE_EXPIRY_S + 1.0)
        with pytest.raises(TimeoutError):
            conn.recv(1)  # nothing, not a close, while the server keeps the connection
        conn.settimeout(10)
        conn.sendall(ask)
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
