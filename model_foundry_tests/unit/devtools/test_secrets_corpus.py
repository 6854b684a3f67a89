"""The secrets corpus is deterministic and large enough, and its evaluator can fail and pass."""

from __future__ import annotations

import json
import re

import pytest

from model_foundry.devtools.secrets_corpus import (
    WHERES,
    Case,
    Plant,
    as_events,
    corpus,
    evaluate,
    evaluate_blob,
    evaluate_texts,
    oracle_scrub,
    summary,
)
from model_foundry.lib.events import InboxEvent, validate_message
from model_foundry.lib.trajectories import SessionEvent, build_sessions


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return corpus()


def _plants(cases: list[Case]) -> list[Plant]:
    return [p for c in cases for p in c.plants]


def test_the_corpus_is_deterministic(cases: list[Case]) -> None:
    assert corpus(7) == cases
    assert corpus(8) != cases


def test_the_corpus_is_large_and_varied(cases: list[Case]) -> None:
    facts = summary(cases)
    assert len(facts["kinds"]) >= 50
    assert facts["values"] >= 400
    assert len(facts["contexts"]) >= 20
    assert set(facts["wheres"]) == set(WHERES)
    assert set(facts["encodings"]) == {"plain", "json", "json2", "url", "base64"}
    negatives = [n for c in cases for n in c.negatives]
    for pattern in (
        r"^[0-9a-f]{40}$",  # git SHA
        r"^sha256:[0-9a-f]{64}$",
        r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        r"x-access-token:none@github\.com",
        r"^\$\{DB_PASSWORD\}$",
        r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$",
    ):
        assert any(re.search(pattern, n) for n in negatives), pattern


def test_each_value_is_in_its_text_as_the_case_writes_it(cases: list[Case]) -> None:
    for case in cases:
        for plant in case.plants:
            assert plant.random_part and plant.random_part in plant.value
            assert plant.shown in case.text, (plant.kind, plant.context)
            assert any(form in case.text for form in plant.leak_forms)
            if plant.encoding == "base64":
                assert plant.random_part not in case.text
        for s in (*case.negatives, *case.keep_words):
            assert s in case.text


def test_an_identity_scrubber_leaks_everything(cases: list[Case]) -> None:
    report = evaluate(cases, lambda text: text)
    assert report.total.plants == len(_plants(cases))
    assert report.recall == 0.0
    assert report.fragment_free_share == 0.0
    assert report.negatives_kept_share == 1.0
    assert report.keep_words_kept_share == 1.0
    assert len(report.leaks) == report.total.plants
    table = report.format()
    assert "recall" in table and "github_classic_pat" in table and "k8s_secret" in table


def test_a_scrubber_that_knows_the_answers_leaks_nothing(cases: list[Case]) -> None:
    plants = _plants(cases)
    report = evaluate(cases, lambda text: oracle_scrub(plants, text))
    assert report.recall == 1.0
    assert report.fragment_free_share == 1.0
    assert report.negatives_kept_share == 1.0
    assert report.keep_words_kept_share == 1.0
    assert report.leaks == []


def test_a_fragment_left_behind_counts_but_not_as_a_whole_leak(cases: list[Case]) -> None:
    def keep_a_piece(case: Case) -> str:
        text = case.text
        for plant in case.plants:
            cut = plant.random_part[3 : 3 + 12]
            text = oracle_scrub([plant], text, mask=f"[REDACTED {cut}]")
        return text

    plain = [c for c in cases if all(p.encoding == "plain" for p in c.plants)]
    report = evaluate_texts(plain, [keep_a_piece(c) for c in plain])
    assert report.recall == 1.0
    long_enough = sum(len(p.random_part) >= 15 for c in plain for p in c.plants)
    assert report.total.plants - report.total.fragment_free == long_enough


def test_a_scrubber_that_deletes_everything_loses_the_negatives(cases: list[Case]) -> None:
    report = evaluate(cases, lambda text: "[REDACTED]")
    assert report.recall == 1.0
    assert report.negatives_kept_share == 0.0
    assert report.keep_words_kept_share == 0.0


def test_texts_must_match_the_cases(cases: list[Case]) -> None:
    with pytest.raises(ValueError):
        evaluate_texts(cases, [])


def test_events_follow_the_contract_and_reach_the_trajectories(cases: list[Case]) -> None:
    events = as_events(cases)
    assert len({e["event_id"] for e in events}) == len(events)
    assert 30 <= len({e["correlation_id"] for e in events}) <= 40
    assert {e["subject"] for e in events} == {"llm.chat.persist", "llm.tool_call"}
    nested = [e for e in events if "tool_input" in e["payload"].get("arguments", {})]
    assert nested and all(isinstance(e["payload"]["arguments"]["tool_input"], str) for e in nested)
    inbox = []
    for seq, body in enumerate(events, 1):
        event = validate_message(str(body["subject"]), json.dumps(body).encode(), seq)
        assert isinstance(event, InboxEvent), event
        payload = json.loads(event.payload_json)
        inbox.append(
            SessionEvent(
                event.event_id, event.subject, event.correlation_id, event.occurred_at, payload
            )
        )
    _, turns = build_sessions(inbox)
    exported = "\n".join(
        json.dumps(
            {
                "role": t.turn.role,
                "content": t.turn.content,
                "reasoning": t.turn.reasoning,
                "tool_calls": [c.as_openai() for c in t.turn.tool_calls],
            }
        )
        for t in turns
    )
    # every planted value reaches the export, escaped however many times it was
    report = evaluate_blob(cases, exported)
    assert report.recall == 0.0
    assert report.negatives_kept_share == 1.0
    assert report.keep_words_kept_share == 1.0
    # and the blob evaluator sees a value that survived only JSON-escaped
    raw_scrubbed = evaluate_blob(cases, oracle_scrub(_plants(cases), exported))
    assert raw_scrubbed.recall < 1.0
    # which an oracle that also knows the escaped forms removes
    escaped = exported
    for plant in _plants(cases):
        for form in sorted({plant.shown, *plant.leak_forms}, key=len, reverse=True):
            for _ in range(4):
                escaped = escaped.replace(form, "[REDACTED]")
                form = json.dumps(form)[1:-1]
    clean = evaluate_blob(cases, escaped)
    assert clean.recall == 1.0
    assert clean.fragment_free_share == 1.0
    assert clean.negatives_kept_share == 1.0
