"""What the summary and translation prompts say (pure logic).

A summary is written in the session's language; a translation goes the other way: Japanese
summaries into English, everything else into Japanese.
"""

from __future__ import annotations

from dataclasses import dataclass

from model_foundry.lib.summaries.chunks import Chunk, Piece

LANGUAGE_NAMES = {"en": "English", "ja": "Japanese"}


def other_language(lang: str) -> str:
    return "en" if lang == "ja" else "ja"


def translation_params(source: str) -> dict[str, str]:
    return {
        "source_lang": LANGUAGE_NAMES[source],
        "target_lang": LANGUAGE_NAMES[other_language(source)],
    }


@dataclass(frozen=True)
class ChatLine:
    role: str
    content: str


def transcript(lines: list[ChatLine], *, max_messages: int, max_chars: int) -> str:
    """The last ``max_messages`` messages, each cut to ``max_chars``, as ``role: text`` lines."""
    kept = lines[-max_messages:] if max_messages > 0 else lines
    out = []
    if len(kept) < len(lines):
        out.append(f"[{len(lines) - len(kept)} earlier messages omitted]")
    for line in kept:
        text = " ".join(line.content.split())
        if len(text) > max_chars:
            text = text[: max_chars - 1] + "…"
        out.append(f"{line.role}: {text}")
    return "\n".join(out)


def summary_messages(session_id: str, text: str, language: str) -> list[dict[str, str]]:
    """Chat messages asking for a short operator-facing summary of one session."""
    lang = LANGUAGE_NAMES.get(language, "English")
    return [
        {
            "role": "system",
            "content": (
                "You summarise sessions of an AI coding and writing agent for its operator. "
                f"Write 2-4 plain sentences in {lang}: what was asked, what was done, and "
                "anything left open. No preamble."
            ),
        },
        {"role": "user", "content": f"Session {session_id}\n\n{text}\n\nSummarise this session."},
    ]


def part_messages(session_id: str, chunk: Chunk, level: int, language: str) -> list[dict[str, str]]:
    """The prompt for one part: a stretch of the transcript, or summaries of earlier parts."""
    lang = LANGUAGE_NAMES.get(language, "English")
    if level == 1:
        what = f"messages {chunk.first}-{chunk.last}"
        system = (
            "You summarise one stretch of a longer session of an AI coding and writing agent "
            f"for its operator. Write 2-4 plain sentences in {lang}: what was asked, what was "
            "done, and anything left open in this stretch. No preamble."
        )
    else:
        what = f"summaries of parts {chunk.first}-{chunk.last}"
        system = (
            "You combine summaries of consecutive stretches of one session of an AI coding and "
            f"writing agent into one. Write 2-4 plain sentences in {lang}. No preamble."
        )
    return [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": f"Session {session_id}, {what}:\n\n{chunk.text()}\n\nSummarise this.",
        },
    ]


def reduce_messages(session_id: str, pieces: list[Piece], language: str) -> list[dict[str, str]]:
    """The final prompt over part summaries."""
    lang = LANGUAGE_NAMES.get(language, "English")
    return [
        {
            "role": "system",
            "content": (
                "You summarise sessions of an AI coding and writing agent for its operator from "
                "summaries of their consecutive parts. Write 2-4 plain sentences in "
                f"{lang}: what was asked, what was done, and anything left open. No preamble."
            ),
        },
        {
            "role": "user",
            "content": (
                f"Session {session_id}, in {len(pieces)} parts:\n\n"
                + "\n".join(p.text for p in pieces)
                + "\n\nSummarise the whole session."
            ),
        },
    ]


__all__ = [
    "LANGUAGE_NAMES",
    "ChatLine",
    "other_language",
    "part_messages",
    "reduce_messages",
    "summary_messages",
    "transcript",
    "translation_params",
]
