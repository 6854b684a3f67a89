"""The simulator's stated tokenizer and chat template, behind ``/tokenize`` and ``/apply-template``.

A token is up to four consecutive ASCII letters or digits, or any other single character that
is not white space: "DuckDB writer" is ``Duck DB writ er`` (4 tokens), "日本語。" is 4. Like the
byte-fallback tokenizers real servers use, it never yields more tokens than the text has UTF-8
bytes, so the pipeline's fallback estimate stays an upper bound here too.

The chat template renders each message as ``<role>\\n<content>\\n`` after a ``<bos>`` line, then
``assistant\\n`` for the answer; the BOS counts as one token when special tokens are added.
Usage in the simulator's answers uses the same counts, so ``/tokenize`` agrees with ``usage``.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

TOKEN_RE = re.compile(r"[A-Za-z0-9]{1,4}|[^\sA-Za-z0-9]")
BOS = "<bos>"


def pieces(text: str, *, add_special: bool = False) -> list[str]:
    """The tokens' texts, the BOS first when special tokens are added (what a prompt cache
    compares: ids are short hashes and two texts may share one)."""
    found = TOKEN_RE.findall(text.replace(BOS, ""))
    return [BOS, *found] if add_special or text.startswith(BOS) else found


def tokenize(text: str, *, add_special: bool = False) -> list[int]:
    """Token ids (stable per token text within a process; only their number matters)."""
    return [
        1 if t == BOS else zlib.crc32(t.encode()) & 0x7FFF
        for t in pieces(text, add_special=add_special)
    ]


def count(text: str) -> int:
    return len(tokenize(text))


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def apply_template(messages: list[dict[str, Any]]) -> str:
    turns = "".join(f"{m.get('role', 'user')}\n{text_of(m.get('content'))}\n" for m in messages)
    return f"{BOS}\n{turns}assistant\n"


def chat_pieces(messages: list[dict[str, Any]]) -> list[str]:
    """The tokens' texts of chat messages as the simulated server receives them."""
    return pieces(apply_template(messages))


def count_chat(messages: list[dict[str, Any]]) -> int:
    """Prompt tokens of chat messages as the simulated server receives them."""
    return len(tokenize(apply_template(messages)))


__all__ = [
    "BOS",
    "TOKEN_RE",
    "apply_template",
    "chat_pieces",
    "count",
    "count_chat",
    "pieces",
    "text_of",
    "tokenize",
]
