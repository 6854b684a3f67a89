"""What a slot's error message says about the slot: pure parsing of server error texts.

The context window a slot really has is stated in the error it returns when a prompt does
not fit. Wordings (checked against the servers' sources):

- vLLM: "This model's maximum context length is 2048 tokens. However, you requested ..."
  (``vllm/entrypoints/openai/serving_engine.py``, 0.5 line; later releases keep the first
  sentence and reword the second);
- llama.cpp server: "request (2719 tokens) exceeds the available context size (1024 tokens),
  try increasing it", and for an input alone larger than the context "input (2719 tokens) is
  larger than the max context size (1024 tokens). skipping"
  (``tools/server/server-context.cpp`` as vendored in llama-cpp-python 0.3.36).
"""

from __future__ import annotations

import re

_CONTEXT_LIMIT_PATTERNS = (
    # vLLM
    re.compile(r"maximum context length is (\d+) tokens", re.IGNORECASE),
    # llama.cpp: the context size comes after the request's own token count.
    re.compile(r"exceeds the available context size \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"larger than the max context size \((\d+) tokens\)", re.IGNORECASE),
)


def context_limit_from_error(message: str) -> int | None:
    """The context size (tokens) a "prompt too long" error states; None for any other message."""
    if not isinstance(message, str):
        return None
    for pattern in _CONTEXT_LIMIT_PATTERNS:
        found = pattern.search(message)
        if found:
            limit = int(found.group(1))
            return limit if limit > 0 else None
    return None


__all__ = ["context_limit_from_error"]
