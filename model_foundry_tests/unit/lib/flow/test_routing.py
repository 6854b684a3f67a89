"""Routing figures against the shipped slot file: shares, the unknown bucket, the idle check."""

from datetime import UTC, datetime, timedelta

import pytest

from model_foundry.lib import settings
from model_foundry.lib.flow.routing import (
    UNKNOWN_SLOT,
    ChatTurn,
    idle_sentence,
    routing_verdict,
    session_shares,
    slot_for,
    watched_slots,
)
from model_foundry.lib.slots.config import SlotFile, load_slot_file

T0 = datetime(2025, 3, 3, 23, 50, tzinfo=UTC)


@pytest.fixture(scope="module")
def slot_file() -> SlotFile:
    return load_slot_file(settings.SHIPPED_SLOT_FILE)


def turn(session: str, minute: int, slot: str | None, model: str | None = None) -> ChatTurn:
    return ChatTurn(session, T0 + timedelta(minutes=minute), slot, model, 100, 10)


def test_a_turn_maps_by_slot_then_by_model(slot_file: SlotFile) -> None:
    assert slot_for(turn("s", 0, "kindergarten", "anything"), slot_file) == "kindergarten"
    # No slot: the model names it, exactly, as llama.cpp's file path, or as a unique prefix.
    assert slot_for(turn("s", 0, None, "gemma-4-31b-it-nvfp4"), slot_file) == "naughty"
    path = "/models/gemma-4-26b-a4b-it-iq4_xs.gguf"
    assert slot_for(turn("s", 0, None, path), slot_file) == "kindergarten"
    assert slot_for(turn("s", 0, None, "gemma-4-31b-it"), slot_file) == "naughty"
    # "gemma-4" fits two slots' models: no guess.
    assert slot_for(turn("s", 0, None, "gemma-4"), slot_file) == UNKNOWN_SLOT
    assert slot_for(turn("s", 0, "bigbox", "mystery-70b"), slot_file) == UNKNOWN_SLOT
    assert slot_for(turn("s", 0, None, None), slot_file) == UNKNOWN_SLOT


def test_each_sessions_shares_add_up_to_one_across_days_and_unknown(slot_file: SlotFile) -> None:
    turns = [
        turn("a", 0, "naughty"),
        turn("a", 5, "naughty"),
        # Past midnight: the same session's turns on the next day.
        turn("a", 20, "grandpa"),
        turn("a", 21, "bigbox", "mystery-70b"),
        turn("b", 0, None, "glm-5.1"),
    ]
    rows = session_shares(turns, slot_file)
    for session in ("a", "b"):
        assert sum(r.share for r in rows if r.correlation_id == session) == pytest.approx(1.0)
    by_key = {(r.correlation_id, r.day.isoformat(), r.slot): r for r in rows}
    naughty = by_key[("a", "2025-03-03", "naughty")]
    assert (naughty.turns, naughty.prompt_tokens, naughty.completion_tokens) == (2, 200, 20)
    assert naughty.share == pytest.approx(0.5)
    assert naughty.roles == ("naughty", "worker")
    assert naughty.model == "gemma-4-31b-it-nvfp4"
    unknown = by_key[("a", "2025-03-04", UNKNOWN_SLOT)]
    assert (unknown.named_as, unknown.model, unknown.roles) == (("bigbox",), "mystery-70b", ())
    assert by_key[("b", "2025-03-03", "grandpa")].share == 1.0


def test_the_check_watches_live_chat_slots_only(slot_file: SlotFile) -> None:
    assert [s.name for s in watched_slots(slot_file, "standard")] == ["naughty", "kindergarten"]
    assert [s.name for s in watched_slots(slot_file, "full")] == [
        "grandpa",
        "naughty",
        "kindergarten",
    ]


def test_warns_when_kindergarten_gets_nothing(slot_file: SlotFile) -> None:
    turns = [turn(f"s{i % 20}", i, "naughty") for i in range(1284)]
    verdict = routing_verdict(turns, slot_file, "standard")
    assert verdict.idle == ("kindergarten",)
    assert not verdict.ok
    assert verdict.warnings() == [
        "the orchestrator routed 0 of 1,284 agent turns to kindergarten (live in profile "
        "standard) in the last 20 sessions; naughty took 100%"
    ]


def test_quiet_when_every_live_worker_slot_works(slot_file: SlotFile) -> None:
    turns = [turn("s1", i, "naughty" if i % 3 else "kindergarten") for i in range(30)]
    # The translator never gets session turns and is not watched; grandpa is not live.
    verdict = routing_verdict(turns, slot_file, "standard")
    assert verdict.ok and verdict.warnings() == []
    assert verdict.turns_by_slot == {"naughty": 20, "kindergarten": 10}


def test_the_full_profile_names_every_idle_slot_and_the_unknown_share(slot_file: SlotFile) -> None:
    turns = [turn("s1", i, "naughty") for i in range(3)] + [turn("s2", 9, "bigbox")]
    verdict = routing_verdict(turns, slot_file, "full")
    assert verdict.idle == ("grandpa", "kindergarten")
    assert idle_sentence(verdict) == (
        "the orchestrator routed 0 of 4 agent turns to grandpa or kindergarten (live in "
        "profile full) in the last 2 sessions; naughty took 75%, unknown 25%"
    )
    assert verdict.unknown_names == ("bigbox",)
    assert verdict.warnings()[1] == (
        "chat turns name slot bigbox, missing from the slot file; their turns count as unknown"
    )


def test_no_turns_is_no_verdict_on_idleness(slot_file: SlotFile) -> None:
    verdict = routing_verdict([], slot_file, "standard")
    assert verdict.ok and verdict.turns == 0


def test_the_window_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODEL_FOUNDRY_ROUTING_WINDOW_SESSIONS", raising=False)
    assert settings.routing_window_sessions() == 20
    monkeypatch.setenv("MODEL_FOUNDRY_ROUTING_WINDOW_SESSIONS", "5")
    assert settings.routing_window_sessions() == 5
    for bad in ("0", "many"):
        monkeypatch.setenv("MODEL_FOUNDRY_ROUTING_WINDOW_SESSIONS", bad)
        with pytest.raises(ValueError, match="1 or more"):
            settings.routing_window_sessions()
