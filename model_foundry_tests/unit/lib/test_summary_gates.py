"""Summaries and translations carry the quality gate that holds them back, as they are built
from an answer (lib/summaries/rows.py, lib/summaries/translations.py): planted answers."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from model_foundry.lib.gates.answers import held_back
from model_foundry.lib.gates.config import GateConfig
from model_foundry.lib.llm import Answer, Body, Completion, Planned, Request
from model_foundry.lib.slots.quirks import translation_messages
from model_foundry.lib.summaries.mapreduce import Summarised
from model_foundry.lib.summaries.pending import SessionToSummarise, SummaryToTranslate
from model_foundry.lib.summaries.prompts import translation_params
from model_foundry.lib.summaries.rows import summary_row
from model_foundry.lib.summaries.translations import Translations

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TRANSCRIPT = (
    "Summarise the session in two sentences.\n"
    "user: the nightly backup to the NAS failed with a permission error on /srv/photos\n"
    "assistant: I checked the mount options and remounted the share with the right uid"
)
GOOD_SUMMARY = "The backup failed on a permission error; remounting the share fixed it."


def completion(text: str, finish_reason: str = "stop") -> Completion:
    return Completion("k", text, None, "slot", "model", 50, 12, 0.4, 30.0, finish_reason)


def summarised(text: str, finish_reason: str = "stop") -> Summarised:
    session = SessionToSummarise(
        "session-a", 2, ["e1", "e2"], WHEN, WHEN, [], queued_commit=0, queued_at=WHEN
    )
    request = Request("session_summary", "kindergarten", Body(prompt=TRANSCRIPT))
    return Summarised(
        session, Planned(request, "k", "model", {}, "s"), completion(text, finish_reason), "en", []
    )


@pytest.mark.parametrize(
    ("text", "finish_reason", "cause"),
    [
        (GOOD_SUMMARY, "stop", None),
        (GOOD_SUMMARY, "length", "cut_off"),
        ("... --- ...", "stop", "empty"),
        # The transcript handed back is no summary.
        (
            "the nightly backup to the NAS failed with a permission error on /srv/photos",
            "stop",
            "echo",
        ),
        ("The backup failed. " * 12, "stop", "repetition"),
    ],
)
def test_a_summary_row_carries_the_gate_of_its_answer(
    text: str, finish_reason: str, cause: str | None
) -> None:
    row = summary_row(summarised(text, finish_reason), "run")
    assert row is not None and row.gate == cause


def test_a_summary_gate_a_dataset_skips_is_not_applied() -> None:
    row = summary_row(
        summarised(GOOD_SUMMARY, "length"), "run", GateConfig(skip=frozenset({"cut_off"}))
    )
    assert row is not None and row.gate is None


def translated(source_lang: str, text: str, finish_reason: str = "stop") -> str | None:
    item = SummaryToTranslate("k", "session-a", source_lang, "a summary to translate")
    request = Request(
        "t", "translator", Body(text=item.summary), params=translation_params(source_lang)
    )
    row = Translations().row(
        item, Answer(Planned(request, "t", "m", {}, "s"), completion(text, finish_reason)), "run"
    )
    assert row is not None
    return row.gate


def test_a_translation_row_carries_the_gate_of_its_answer() -> None:
    assert translated("en", "要約：バックアップは権限エラーで失敗しました。") is None
    assert translated("ja", "The backup failed on a permission error.") is None
    assert translated("en", "The backup failed on a permission error.") == "wrong_script"
    assert translated("ja", "サーバーは明日止まります。") == "wrong_script"
    assert translated("en", "要約：バックアップは失敗しました", "length") == "cut_off"


def test_a_translation_near_a_worked_example_is_kept_and_the_example_itself_is_an_echo() -> None:
    # The words "backup" and "did" are in an example too; a translation may use them.
    assert translated("en", "バックアップは失敗しました。") is None
    assert (
        translated("en", "おはようございます。バックアップはエラーなしで完了しました。") == "echo"
    )


def test_a_translation_that_hands_back_its_instruction_is_an_echo() -> None:
    # What a chat slot is told to do with the text, given back in the target's script.
    instruction = translation_messages("x", "Japanese", "English")[0]["content"]
    assert translated("ja", instruction) == "echo"


def test_held_back_names_every_cause() -> None:
    counts = held_back([None, "echo", "echo", "cut_off", None])
    assert counts["echo"] == 2 and counts["cut_off"] == 1
    assert sum(counts.values()) == 3 and set(counts) >= {"empty", "repetition", "wrong_script"}
