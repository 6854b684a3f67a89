"""Quality gates on what a model wrote, before it enters an export.

Each answer gets at most one cause, checked in this order (the cheapest and surest first):

- ``cut_off``: the model stopped at the token limit (``finish_reason == "length"``);
- ``empty``: nothing said: only whitespace, markup, list numbers or punctuation, or digits
  mixed with marks that make no figure;
- ``unparsed``: a structured answer (a ``json_schema`` was asked) that is not strict JSON
  (``NaN`` is not) or does not validate (``schema.py``); a judge verdict is checked by
  ``verdict.parse_verdict`` itself;
- ``repetition``: a loop, by Gopher's repetition statistics as adapted for short chat
  answers (``repetition.py``);
- ``echo``: the prompt given back: at least :attr:`GateConfig.echo_ngram` words, and at least
  ``echo_share`` of the answer's words inside a run of ``echo_ngram`` words the prompt has
  too. A run of kanji, of hiragana or of katakana counts as a word here (Japanese has no
  spaces). Before ``wrong_script``, as an untranslated text handed back is both and this is
  the surer name; after ``repetition``, so a phrase of the prompt looped is a loop (a
  question given back twice is no loop, see above, and is an echo);
- ``wrong_script``: a translation mostly not in the target's script (``script.py``, the one
  language detector): a Japanese character counts one, a Latin word one, a word in any other
  script (Hangul, Cyrillic, ...) one against both targets;
- ``noise_count``: a list far longer than the prompt asked for, or a count past where it was
  asked to stop (``asked.noise_count``): the model did not stop;
- ``noise_words``, ``noise_symbols``, ``noise_word_length``, ``noise_chars``: junk that is no
  loop, echo or cut-off answer, by Gopher's quality statistics (``noise.py``), then
  ``noise_stop_words``, ``noise_consonants``, ``noise_scripts``, ``noise_hex``,
  ``noise_digits`` for junk made of letters or figures, and ``noise_kana``,
  ``noise_particles`` (Japanese), ``noise_escapes``, ``noise_tokens``, ``noise_keyboard``,
  ``noise_unfinished``, ``noise_mojibake``, ``noise_layout``;
  not for structured answers, which their schema judges;
- ``noise_questions``: questions that continue the prompt's quiz instead of answering it
  (``asked.noise_questions``), unless questions were asked for.

A short answer in a form its prompt asks for (Morse code, emoji, a regex, a binary table, a
refrain) is not held back for the causes that form explains (``asked.py``).

Which causes apply and their thresholds are a :class:`config.GateConfig`. Nothing here
deletes anything: the export records the cause beside the row and leaves it out.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from model_foundry.lib.gates.asked import asked_for, noise_count, noise_questions
from model_foundry.lib.gates.config import CAUSES, DEFAULTS, GateConfig
from model_foundry.lib.gates.language import foreign_script, wrong_language
from model_foundry.lib.gates.noise import NOISE_CAUSES, RULE_LINES, is_figure, noise_cause
from model_foundry.lib.gates.repetition import LETTER, ngrams, repetition_stat
from model_foundry.lib.gates.schema import is_unparsed
from model_foundry.lib.gates.script import WORD, script_share

# A list's own number (``1.``, ``2)``), no answer by itself.
_LIST_NUMBER = re.compile(r"^\d{1,3}[.)]$")
# Between figures, these make a sum or a mapping (``1234 + 8766 = 10000``, ``3.10 → 2026-10``);
# a per cent sign ending a sentence after its figure stands alone too (``= 37.5 %.``), not one
# between figures (``12 % 3``).
_OPERATORS = frozenset("+-−=×÷*/<>≤≥≈→←") | {"->", "=>", "<-", "<=", "%."}
_MARKUP = re.compile(r"<[^>]*>|&[a-z]+;|```\w*")
# Code marked as such holding a letter or a digit (```` `!!!` ```` is no code).
_CODE_WITH_CONTENT = re.compile(r"`[^`\n]*[A-Za-z0-9][^`\n]*`|```[^\n]*\n[^`]*[A-Za-z0-9][^`]*```")
# Inside a run, these part figures (``2^10``, ``2×3=6``, ``2**8``, a table's ``|``): each part
# is judged. Not ``-``, which dates and negative numbers hold.
_INNER_OPERATORS = re.compile(r"\*\*|[\^×÷*/=+<>≤≥≈→←|√−]")
_JA_SEPARATORS = re.compile(r"[、。・]")
_INTO = re.compile(r"\binto (Japanese|English)\b", re.IGNORECASE)
_LANGS = {"japanese": "ja", "ja": "ja", "english": "en", "en": "en"}
# The words an echo frames the prompt with ("You asked: ...", "Question: ... Answer:"): no
# news, unlike the word a restating answer adds ("Yes. Paris is the capital of France.").
_FRAMING = frozenset(
    {
        "you", "asked", "asking", "ask", "question", "answer", "user", "assistant", "summary",
        "thanks", "thank", "sure", "ok", "okay", "yes", "no", "here", "is", "are", "said",
        "wrote", "prompt", "text", "q", "a",
    }
)  # fmt: skip
# Of an answer's words, at least this share new to the prompt (and no framing) makes it a
# restatement that says something, not an echo.
_NEWS_SHARE = 0.1


def is_wordless(text: str) -> bool:
    """Nothing but whitespace, markup, list numbers or punctuation: an answer of figures
    alone (``42``, ``1969``, ``2026-12-05``, a list or table of numbers) says something, but
    not when a run in it is no figure (``12 % 3``) or it is only list numbers (``1. 2. 3.``)."""
    if _CODE_WITH_CONTENT.search(text):
        return False  # code the answer marks as such (a cron line, a regex in backticks)
    bare = RULE_LINES.sub(" ", _MARKUP.sub(" ", text))
    if LETTER.search(bare):
        return False
    # NFKC: full-width figures and signs (``１×２＝２``), superscript powers (``2⁸``).
    bare = _INNER_OPERATORS.sub(" ", unicodedata.normalize("NFKC", bare))
    # Japanese lists figures with its own comma and full stop (``1、2、3。``).
    bare = _JA_SEPARATORS.sub(" ", bare)
    runs = [r for r in bare.split() if r not in _OPERATORS]
    # ``42.`` alone is a figure and its full stop; list numbers come two or more.
    if sum(1 for r in runs if _LIST_NUMBER.match(r)) > 1:
        runs = [r for r in runs if not _LIST_NUMBER.match(r)]
    return not runs or not all(is_figure(r) for r in runs)


def is_echo(answer: str, prompt: str, config: GateConfig = DEFAULTS) -> bool:
    """Most of ``answer`` is runs of words copied from ``prompt`` (case and punctuation
    ignored), and it adds no news: a short answer that repeats a few of the prompt's words is
    not an echo, nor one that restates the question with its answer in it (a tenth of its
    words, at least one, neither in the prompt nor framing)."""
    n = config.echo_ngram
    words = [w.casefold() for w in WORD.findall(answer)]
    if len(words) < n:
        return False
    asked_words = [w.casefold() for w in WORD.findall(prompt)]
    asked = set(ngrams(asked_words, n))
    covered = [False] * len(words)
    for i in range(len(words) - n + 1):
        if " ".join(words[i : i + n]) in asked:
            covered[i : i + n] = [True] * n
    if sum(covered) / len(words) < config.echo_share:
        return False
    known = _FRAMING.union(asked_words)
    news = sum(1 for w in words if w not in known)
    return news < max(1.0, _NEWS_SHARE * len(words))


def gate(
    answer: str | None,
    *,
    finish_reason: str | None = None,
    prompt: str = "",
    target_lang: str | None = None,
    json_schema: Mapping[str, Any] | None = None,
    config: GateConfig = DEFAULTS,
) -> str | None:
    """The cause ``answer`` is held back for (see :data:`CAUSES`), or None to keep it."""
    text = answer or ""
    on = [c for c in CAUSES if c not in config.skip]
    checks = {
        "cut_off": lambda: finish_reason == "length",
        "empty": lambda: is_wordless(text),
        "unparsed": lambda: json_schema is not None and is_unparsed(text, json_schema),
        "wrong_script": lambda: (
            (
                target_lang is not None
                and (share := script_share(text, target_lang)) is not None
                and share < config.script_share
            )
            or wrong_language(text, prompt)
            or foreign_script(text, prompt)
        ),
        "echo": lambda: bool(prompt) and is_echo(text, prompt, config),
        "repetition": lambda: repetition_stat(text, config) is not None,
        "noise_count": lambda: bool(prompt) and noise_count(text, prompt),
        "noise_questions": lambda: json_schema is None and noise_questions(text, prompt),
    }
    # A structured answer is JSON, judged by its schema: its braces are no noise. The four
    # noise statistics are worked out once, for the first of them that applies.
    noisy: list[str | None] = []
    for cause in NOISE_CAUSES:
        checks[cause] = lambda c=cause: json_schema is None and _noise(noisy, text, config) == c
    # A short answer in a form its prompt asks for (Morse code, a regex) is no noise of it.
    return next((c for c in on if checks[c]() and not asked_for(c, text, prompt)), None)


def _noise(memo: list[str | None], text: str, config: GateConfig) -> str | None:
    if not memo:
        memo.append(noise_cause(text, config))
    return memo[0]


def target_language(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> str | None:
    """A translation's target (``ja``/``en``): its ``target_lang`` parameter, else a system
    turn asking "... into Japanese" (``slots.quirks.translation_messages``); None otherwise."""
    named = params.get("target_lang")
    if isinstance(named, str):
        return _LANGS.get(named.casefold())
    for m in messages:
        if m.get("role") == "system" and (found := _INTO.search(m.get("content") or "")):
            return _LANGS[found.group(1).casefold()]
    return None


def body_text(body: Mapping[str, Any]) -> str:
    """The words a request asked with (its messages' contents, else its prompt or text): what
    an answer is compared with for ``echo``. ``body`` as a request stores it (``Body.as_dict``)."""
    messages = body.get("messages") or []
    if messages:
        return "\n".join(str(m.get("content") or "") for m in messages)
    return str(body.get("prompt") or body.get("text") or "")


def held_back(causes: Sequence[str | None]) -> dict[str, int]:
    """How many of ``causes`` each gate held back, every cause named (0 when none): the
    ``held_back_by_gate`` figure the exports and the summary assets show."""
    counts = Counter(c for c in causes if c)
    return {c: counts.get(c, 0) for c in CAUSES}


def sample_gate(record: Mapping[str, Any], config: GateConfig) -> str | None:
    """The cause of an exported sample (its answer the last message), or None."""
    try:
        params = json.loads(record.get("params") or "{}")
    except json.JSONDecodeError:
        params = {}
    params = params if isinstance(params, dict) else {}
    asked = record["messages"][:-1]
    schema = params.get("json_schema")
    return gate(
        record.get("response"),
        finish_reason=record.get("finish_reason"),
        prompt="\n".join(m.get("content") or "" for m in asked),
        target_lang=target_language(asked, params),
        json_schema=schema if isinstance(schema, dict) else None,
        config=config,
    )


def pair_gate(record: Mapping[str, Any], config: GateConfig) -> str | None:
    """The cause of a preference pair: its chosen answer's, else its rejected answer's."""
    asked = record["prompt"]
    prompt = "\n".join(m.get("content") or "" for m in asked)
    target = target_language(asked, {})
    for side in ("chosen", "rejected"):
        answer = record[side][-1]["content"]
        cause = gate(answer, prompt=prompt, target_lang=target, config=config)
        if cause:
            return cause
    return None


__all__ = [
    "body_text",
    "gate",
    "held_back",
    "is_echo",
    "is_wordless",
    "pair_gate",
    "sample_gate",
    "target_language",
]
