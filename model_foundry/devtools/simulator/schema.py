"""What a constrained server returns for a JSON schema: a value that follows it.

A real server with constrained decoding (llama.cpp's grammar from ``response_format``, vLLM's
structured outputs) only lets the model write text the schema admits; the simulator stands
in with a value built from the schema and a seed, so the same request gets the same answer.
It covers what the pipeline's own schemas use: objects with ``properties`` and
``required``, ``enum``, integers and numbers with ``minimum``/``maximum``, strings with
``maxLength``, booleans, arrays with ``items``, and ``null``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

_WORDS = ("clear", "correct", "brief", "thorough", "vague", "wrong", "helpful", "partial")


def _draw(seed: str, path: str) -> int:
    digest = hashlib.blake2b(f"{seed}\x00{path}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def instance(schema: Mapping[str, Any], seed: str, path: str = "$") -> Any:
    """A value following ``schema``, the same for the same ``seed``."""
    if "enum" in schema:
        options = list(schema["enum"])
        return options[_draw(seed, path) % len(options)]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props: Mapping[str, Any] = schema.get("properties") or {}
        return {name: instance(sub, seed, f"{path}.{name}") for name, sub in props.items()}
    if kind in ("integer", "number"):
        low = int(schema.get("minimum", 0))
        high = int(schema.get("maximum", low + 100))
        return low + _draw(seed, path) % (high - low + 1)
    if kind == "string":
        limit = int(schema.get("maxLength", 60))
        words = [_WORDS[(_draw(seed, f"{path}[{i}]")) % len(_WORDS)] for i in range(6)]
        return " ".join(words)[:limit]
    if kind == "boolean":
        return bool(_draw(seed, path) % 2)
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        count = int(schema.get("minItems", 1))
        return [instance(items, seed, f"{path}[{i}]") for i in range(count)]
    return None


__all__ = ["instance"]
