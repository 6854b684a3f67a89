"""The verdict contract: what a judge answers about two answers, and how it is read.

A verdict is strict JSON with a score per answer, in the order the judge read them, and a
short reason (:data:`VERDICT_SCHEMA`). Slots constrain the judge's answer to it; an answer
that still does not parse is a :class:`VerdictError`, one sentence saying why. The quality
gates check a verdict with :func:`parse_verdict` itself, so a kept verdict is one the judging
could read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

SCORE_MIN, SCORE_MAX = 1, 10
REASON_MAX = 200

# What the judge must answer: a score per answer, in the order it read them, and a reason.
VERDICT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "score_1": {"type": "integer", "minimum": SCORE_MIN, "maximum": SCORE_MAX},
        "score_2": {"type": "integer", "minimum": SCORE_MIN, "maximum": SCORE_MAX},
        "reason": {"type": "string", "maxLength": REASON_MAX},
    },
    "required": ["score_1", "score_2", "reason"],
    "additionalProperties": False,
}
# The tokens a verdict may need: the reason's REASON_MAX characters at a token each at worst,
# the scores and the JSON around them, and room for the whitespace the schema's grammar lets
# a model put between the fields (a small model spends tokens there). Cut shorter, a verdict
# ends mid-string and never parses.
VERDICT_MAX_TOKENS = 288


class VerdictError(ValueError):
    """A judge answer that is not the JSON :data:`VERDICT_SCHEMA` asks for."""


def parse_verdict(content: str) -> tuple[int, int, str]:
    """(score of the answer read first, of the second, reason); :class:`VerdictError` says
    in one sentence why an answer is not a verdict."""
    try:
        value = json.loads(content)
    except json.JSONDecodeError as exc:
        shown = " ".join(content.split())[:60]
        raise VerdictError(f"the judge's answer is not JSON ({exc.msg}): {shown!r}") from None
    if not isinstance(value, dict):
        raise VerdictError(f"the judge's answer is JSON but not an object: {type(value).__name__}")
    scores = []
    for name in ("score_1", "score_2"):
        score = value.get(name)
        if isinstance(score, bool) or not isinstance(score, int):
            raise VerdictError(f"the judge's answer has no integer {name}")
        if not SCORE_MIN <= score <= SCORE_MAX:
            raise VerdictError(f"the judge's {name} {score} is outside {SCORE_MIN}-{SCORE_MAX}")
        scores.append(score)
    reason = value.get("reason")
    if not isinstance(reason, str):
        raise VerdictError("the judge's answer has no reason string")
    return scores[0], scores[1], reason[:REASON_MAX]


__all__ = [
    "REASON_MAX",
    "SCORE_MAX",
    "SCORE_MIN",
    "VERDICT_MAX_TOKENS",
    "VERDICT_SCHEMA",
    "VerdictError",
    "parse_verdict",
]
