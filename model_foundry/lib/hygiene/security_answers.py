"""Answers to an account's security questions.

A security question's answer (``First pet: Waffles``, ``答えは「こたろう」``) resets the
account as a password does, yet it is a plain word: no rule's shape and no randomness finds
it. Where a text speaks of security, recovery or secret questions, each answer is taken:

- after a question's label naming what such questions ask (a pet, a mother's maiden name,
  the city or the street, the first school, car or teacher) and a colon, up to the sentence's
  end (at most :data:`_MAX_WORDS` words);
- after ``answer is`` or ``answer:`` (``答えは``, ``回答は``), quoted or bracketed or one word.

Without the cue a label alone (``Pet: cat`` in a vet's form) says nothing secret, and stays.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from model_foundry.lib.hygiene.placeholders import replace_spans, says_placeholder

_CUE = re.compile(
    r"(?i)\b(?:security|recovery|secret|challenge)[ _-]?(?:questions?|q)\b|秘密の質問|合言葉の質問"
    r"|보안 ?질문|секретн\w* вопрос|pregunta (?:de seguridad|secreta)|sicherheitsfrage"
    r"|question (?:secrète|de sécurité)"
)
_HINTS = ("question", "security q", "質問", "질문", "вопрос", "pregunta", "frage")
_MAX_WORDS = 4
# What such questions ask, in a label before a colon (``City where my parents met:``).
_LABEL = re.compile(
    r"(?i)(?<![\w])(?:[\w' -]{0,40}\b(?:pet|maiden|city|town|street|school|car|teacher|friend"
    r"|born|met|nickname|hospital|mascot|team|food|book|movie|mother|father|grand\w*)"
    r"\b[\w' ?-]{0,40})[ \t]*[:：=＝][ \t]*"
    rf"(?P<value>[^\s:：.,;!?\"'「」]+(?:[ \t][^\s:：.,;!?\"'「」]+){{0,{_MAX_WORDS - 1}}})"
    r"(?=[ \t]*(?:[.,;!?\n\"]|'(?![A-Za-z])|$))"
)
_ANSWER = re.compile(
    r"(?i)\banswers?(?:[ \t]+(?:is|was))?[ \t]*[:：]?[ \t]*"
    r"(?:(?P<q>[\"'“])(?P<quoted>[^\"'”\n]{1,40})[\"'”]"
    r"|(?P<word>[A-Z][\w-]{1,30})(?=[ \t]*[.,;\n]|$))"
    r"|(?:答え|回答)(?:は|:|：|=|＝)[ \t]*(?:[「『](?P<ja>[^」』\n]{1,30})[」』]"
    r"|(?P<line>[^\s「」『』。、]{1,30})(?=[ \t]*(?:[。\n]|$)))"
)


def security_answers(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """``text`` with each security question's answer taken (see the module)."""
    lowered = text.lower()
    if not any(h in lowered for h in _HINTS) or _CUE.search(text) is None:
        return text
    spans = [m.span("value") for m in _LABEL.finditer(text)]
    for match in _ANSWER.finditer(text):
        group = next(g for g in ("quoted", "word", "ja", "line") if match.group(g))
        spans.append(match.span(group))
    taken = [(a, b) for a, b in spans if not says_placeholder(text[a:b]) and take(text[a:b])]
    return replace_spans(text, taken, "security_answer", counts)
