"""Failed requests counted by cause: one readable sentence each, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_foundry.lib.llm import (
    CompletionBatch,
    CompletionStore,
    Planned,
    Request,
    cause_lines,
    failure_cause,
    failure_causes,
)
from model_foundry.lib.llm.request import request_key
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.dispatcher import DispatchResult
from model_foundry_tests.replay_server import load_fixture

URLS = {"naughty": "http://127.0.0.1:9/v1"}


def failed(key: str, slot: str = "naughty", *, will_retry: bool = False, **fields: Any) -> Attempt:
    return Attempt(
        key=key,
        task="t",
        role=slot,
        slot=slot,
        model="m",
        runtime="vllm",
        status="error",
        will_retry=will_retry,
        **fields,
    )


def test_each_kind_of_failure_has_its_sentence() -> None:
    too_long = load_fixture("vllm/error_context_length.json")["message"]
    cases = {
        "slot naughty rejected the prompt as too long for its context of 2048 tokens (HTTP 400)": (
            failed("a", error_class="BadRequestError", http_status=400, error=too_long)
        ),
        "slot naughty rejected the prompt as too long for its context (HTTP 400)": failed(
            "b",
            error_class="BadRequestError",
            http_status=400,
            error="the request exceeds the available context size, try increasing it",
        ),
        "empty answer from slot naughty: the slot returned an empty answer": failed(
            "c", error_class="EmptyAnswer", error="the slot returned an empty answer"
        ),
        "slot naughty unreachable: http://127.0.0.1:9/v1": failed(
            "d", error_class="APIConnectionError", error="Connection error."
        ),
        "slot naughty timed out": failed("e", error_class="TimeoutError", error="timed out"),
        "slot naughty answered HTTP 503: Loading model": failed(
            "f", error_class="InternalServerError", http_status=503, error="Loading model\nmore"
        ),
        "slot naughty failed (SlotLeaseLost): lease taken over": failed(
            "g", error_class="SlotLeaseLost", error="lease taken over"
        ),
    }
    for sentence, attempt in cases.items():
        assert failure_cause(attempt, URLS) == sentence
    assert failure_cause(cases["slot naughty unreachable: http://127.0.0.1:9/v1"]) == (
        "slot naughty unreachable"
    )


def test_causes_count_final_failures_only_most_frequent_first() -> None:
    attempts = [
        failed("a", error_class="TimeoutError", will_retry=True),
        failed("a", error_class="TimeoutError"),
        failed("b", error_class="TimeoutError"),
        failed("c", "kindergarten", error_class="EmptyAnswer", error="x"),
        failed("d", error_class="EmptyAnswer", error="x", will_retry=True),
        Attempt(key="d", task="t", role="r", slot="s", model="m", runtime="vllm", status="ok"),
    ]
    causes = failure_causes(attempts)
    assert causes == {"slot naughty timed out": 2, "empty answer from slot kindergarten: x": 1}
    assert list(causes) == ["slot naughty timed out", "empty answer from slot kindergarten: x"]
    assert cause_lines(causes, indent="") == [
        "2 failed: slot naughty timed out",
        "1 failed: empty answer from slot kindergarten: x",
    ]


def test_batch_metadata_has_the_causes_and_the_requests_never_sent() -> None:
    attempts = [failed("a", error_class="TimeoutError")]
    dispatch = DispatchResult(
        attempts=attempts,
        final={"a": attempts[0]},
        undone=["b", "c"],
        slots={},
        seconds=1.0,
        stopped_early=True,
        stop_reason="error share 1/1 passed 50%",
    )
    batch = CompletionBatch(requested=3, failed=["a", "b", "c"], dispatch=dispatch)
    assert batch.metadata()["failure_causes"] == {
        "not sent: error share 1/1 passed 50%": 2,
        "slot naughty timed out": 1,
    }
    assert CompletionBatch(0).metadata()["failure_causes"] == {}


def test_a_servers_words_that_quote_the_prompt_are_scrubbed_wherever_they_are_shown() -> None:
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    echoed = f"1 validation error: input_value='git push https://{token}@github.com'"
    attempts = [
        failed("a", error_class="BadRequestError", http_status=422, error=echoed),
        failed("b", error_class="RuntimeError", error=f"cannot parse {token}"),
    ]
    dispatch = DispatchResult(
        attempts=attempts,
        final={"a": attempts[0], "b": attempts[1]},
        undone=["c"],
        slots={},
        seconds=1.0,
        stopped_early=True,
        stop_reason=f"on_attempt failed: ValueError: {token}",
    )
    batch = CompletionBatch(requested=3, failed=["a", "b", "c"], dispatch=dispatch)
    shown = [*batch.metadata()["failure_causes"], batch.metadata()["stop_reason"]]
    shown += [batch.why(key) for key in ("a", "b", "c")]
    assert len(shown) == 7
    for text in shown:
        assert token[4:16] not in text
    assert any(t.startswith("slot naughty answered HTTP 422: 1 validation error") for t in shown)
    assert "[REDACTED:" in batch.why("a") and batch.why("c").startswith("on_attempt failed")


def test_the_role_is_part_of_the_request_key() -> None:
    messages = [{"role": "user", "content": "hi"}]
    keys = {
        request_key(Request("t", role, Body(messages=messages)), "m", {}) for role in ("a", "b")
    }
    assert len(keys) == 2


def test_blank_answers_stored_as_ok_before_are_not_reused(tmp_path: Path) -> None:
    """Rows written before empty answers became errors: a blank ``ok`` row is not an answer."""
    store = CompletionStore(tmp_path / "store.duckdb")
    for key, content in (("blank", " \n"), ("none", None), ("good", "Four.")):
        attempt = Attempt(
            key=key, task="t", role="r", slot="s", model="m", runtime="vllm", status="ok",
            content=content,
        )  # fmt: skip
        store.record(
            attempt,
            Planned(
                Request("t", "r", Body(prompt="p")), key=key, model="m", output_params={}, slot="s"
            ),
        )
    assert set(store.finished(["blank", "none", "good"])) == {"good"}
