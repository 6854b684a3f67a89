"""The template check's judgement, on what servers were seen to answer (counts and renderings).

The servers themselves are asked in ``integration/lib/slots/test_template_check.py`` (tiny
GGUF) and ``system/test_real_weights.py`` (Gemma 3 270M)."""

from __future__ import annotations

from model_foundry.lib.slots.template_check import PROBE, verdict

SENT = [dict(m) for m in PROBE]
RENDERED = (
    "<start_of_turn>user\n"
    f"{PROBE[0]['content']}\n\n{PROBE[1]['content']}<end_of_turn>\n<start_of_turn>model\n"
)


def test_a_template_that_renders_the_messages_passes() -> None:
    check = verdict("naughty", SENT, rendered=31, bare=24, shown=RENDERED)
    assert check.ok is True and not check.refused
    assert check.describe() == (
        "slot naughty: chat template keeps the messages (31 prompt tokens for text of 24)"
    )


def test_a_template_that_renders_a_word_instead_of_the_messages_is_refused() -> None:
    # What llama.cpp 0.3.36 answers when started with --chat-template gemma.
    check = verdict("kindergarten", SENT, rendered=3, bare=24, shown="gemma")
    assert check.refused
    assert check.describe() == (
        "slot kindergarten: its chat template ignores the messages: 3 prompt tokens for "
        "messages whose text alone is 24; it rendered them as 'gemma'"
    )


def test_fewer_tokens_than_the_text_is_refused_where_no_rendering_is_shown() -> None:
    # vLLM shows no rendering: the counts alone decide.
    check = verdict("naughty", SENT, rendered=5, bare=24, shown=None)
    assert check.refused and "5 prompt tokens" in check.detail
    assert verdict("naughty", SENT, rendered=30, bare=24, shown=None).ok is True


def test_a_template_that_drops_the_system_message_is_refused_by_name() -> None:
    # Enough tokens (a long default system text of its own), but not the one it was given.
    shown = f"<start_of_turn>user\nYou are a helpful assistant.\n\n{PROBE[1]['content']}"
    check = verdict("kindergarten", SENT, rendered=40, bare=24, shown=shown)
    assert check.refused
    assert check.detail.startswith("slot kindergarten: its chat template drops the system message")
