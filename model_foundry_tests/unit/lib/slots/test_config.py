"""The slot file: the shipped example, profiles, role fallbacks and readable errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry.lib.slots.config import (
    DUMMY_API_KEY,
    NoSlotForRoleError,
    SlotFileError,
    load_slot_file,
)
from model_foundry_tests.slot_fixtures import (
    shipped_data,
    shipped_slot_file,
    slot_file_from,
    write_yaml,
)


def test_shipped_file_mirrors_the_design_table() -> None:
    sf = shipped_slot_file()
    got = {n: (s.runtime, s.parallel, s.gpu, s.api) for n, s in sf.slots.items()}
    assert got == {
        "grandpa": ("llamacpp", 1, "any", "chat"),
        "naughty": ("vllm", 3, "GPU0", "chat"),
        "kindergarten": ("llamacpp", 5, "GPU1", "chat"),
        "translator": ("llamacpp", 1, "GPU1", "completions"),
    }
    assert sf.slots["translator"].model == "plamo-2-translate"
    assert all(s.base_url.startswith("http://127.0.0.1:") for s in sf.slots.values())
    assert [s.name for s in sf.live_slots("full")] == [
        "grandpa",
        "naughty",
        "kindergarten",
        "translator",
    ]
    assert [s.name for s in sf.live_slots("standard")] == ["naughty", "kindergarten", "translator"]
    assert [s.name for s in sf.live_slots("minimal")] == ["naughty", "translator"]


def test_profile_comes_from_the_environment_and_defaults_to_standard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sf = shipped_slot_file()
    monkeypatch.delenv("MODEL_FOUNDRY_PROFILE", raising=False)
    assert [s.name for s in sf.live_slots()] == ["naughty", "kindergarten", "translator"]
    monkeypatch.setenv("MODEL_FOUNDRY_PROFILE", "minimal")
    assert [s.name for s in sf.live_slots()] == ["naughty", "translator"]
    monkeypatch.setenv("MODEL_FOUNDRY_PROFILE", "turbo")
    with pytest.raises(SlotFileError, match=r"profiles\.turbo: no such profile"):
        sf.live_slots()


def test_roles_fall_back_to_live_slots() -> None:
    sf = shipped_slot_file()
    # A role's own slot comes first when live.
    assert sf.slots_for_role("grandpa", "full")[0].name == "grandpa"
    assert sf.slots_for_role("reasoning", "full")[0].name == "grandpa"
    # grandpa is not live in standard: its work goes to naughty, then kindergarten.
    assert [s.name for s in sf.slots_for_role("grandpa", "standard")] == ["naughty", "kindergarten"]
    assert [s.name for s in sf.slots_for_role("summary", "minimal")] == ["naughty"]
    assert [s.name for s in sf.slots_for_role("kindergarten", "minimal")] == ["naughty"]
    assert [s.name for s in sf.slots_for_role("translation", "minimal")] == ["translator"]
    tiers = sf.role_tiers("worker", "standard")
    assert [[s.name for s in t] for t in tiers] == [["naughty"], ["kindergarten"]]


def test_a_role_without_any_live_slot_is_a_clear_error() -> None:
    data = shipped_data()
    data["profiles"]["minimal"] = ["naughty"]
    sf = slot_file_from(data)
    with pytest.raises(
        NoSlotForRoleError, match=r"no live slot can serve role 'translator' in profile 'minimal'"
    ):
        sf.slots_for_role("translator", "minimal")
    with pytest.raises(NoSlotForRoleError, match="unknown role 'poet'"):
        sf.slots_for_role("poet", "standard")


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["slots"]["naughty"].update(parallel=0),
            "slots.naughty.parallel: must be >= 1",
        ),
        (lambda d: d["slots"]["naughty"].pop("model"), "slots.naughty.model: is required"),
        (lambda d: d["slots"]["naughty"].update(paralel=3), "slots.naughty.paralel: unknown field"),
        (
            lambda d: d["slots"]["naughty"].update(runtime="ollama"),
            "slots.naughty.runtime: unknown runtime 'ollama' (known: llamacpp, vllm)",
        ),
        (
            lambda d: d["slots"]["naughty"].update(base_url="127.0.0.1:8102"),
            "slots.naughty.base_url: ",
        ),
        (
            lambda d: d["slots"]["translator"]["request_defaults"].pop("max_tokens"),
            "slots.translator.request_defaults.max_tokens: must be set for api: completions",
        ),
        (
            lambda d: d["profiles"]["minimal"].append("bogus"),
            "profiles.minimal.2: unknown slot 'bogus'",
        ),
        (
            lambda d: d["roles"]["summary"].update(fallbacks=["poet"]),
            "roles.summary.fallbacks.0: unknown role 'poet'",
        ),
    ],
)
def test_a_bad_slot_file_names_the_file_and_the_field(
    tmp_path: Path, mutate, expected: str
) -> None:
    data = shipped_data()
    mutate(data)
    path = write_yaml(tmp_path / "slots.yaml", data)
    with pytest.raises(SlotFileError) as info:
        load_slot_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert expected in message, message


def test_unreadable_files_say_what_to_do(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(SlotFileError, match="file not found; set MODEL_FOUNDRY_SLOTS"):
        load_slot_file(missing)
    broken = tmp_path / "broken.yaml"
    broken.write_text("slots:\n  naughty: [unclosed\n", encoding="utf-8")
    with pytest.raises(SlotFileError, match=r"broken\.yaml: line \d+: not valid YAML"):
        load_slot_file(broken)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("just text\n", encoding="utf-8")
    with pytest.raises(SlotFileError, match=r"scalar\.yaml: \(top level\): must be a mapping"):
        load_slot_file(scalar)


def test_the_slot_file_path_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = shipped_data()
    data["slots"]["naughty"]["parallel"] = 7
    path = write_yaml(tmp_path / "mine.yaml", data)
    monkeypatch.setenv("MODEL_FOUNDRY_SLOTS", str(path))
    sf = load_slot_file()
    assert sf.slots["naughty"].parallel == 7
    assert sf.source == str(path)


def test_api_key_is_read_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    slot = shipped_slot_file().slots["naughty"]
    monkeypatch.delenv("NAUGHTY_API_KEY", raising=False)
    assert slot.api_key() == DUMMY_API_KEY
    monkeypatch.setenv("NAUGHTY_API_KEY", "sk-local-123")
    assert slot.api_key() == "sk-local-123"


def test_role_thinking_settings() -> None:
    sf = shipped_slot_file()
    assert sf.thinking_for_role("reasoning") is True
    assert sf.thinking_for_role("kindergarten") is False
    assert sf.thinking_for_role("translation") is None
