"""What is not a secret although it sits where one would: placeholders, references and markers.

A value is a placeholder when a person wrote it to stand for a secret (``sk-xxxx``,
``<your-token>``, ``${TOKEN}``, ``YOUR_API_KEY``, ``changeme``), when it is one of our own
markers (``[REDACTED:...]``), or when it holds too few distinct characters to be random.
``changeme`` and its kin count as placeholders: they are public defaults that every attacker
tries first, so hiding them protects nothing, while keeping them keeps tutorials readable.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TypeVar

_T = TypeVar("_T")

MARKER_PREFIX = "[REDACTED:"


def memo_short(func: Callable[[str], _T]) -> Callable[[str], _T]:
    """``func`` remembering its verdicts on strings of up to 256 characters, the 65,536 most
    recent: ids, digests and names recur through a session (a tool result quoted again, a
    hash on every line). Longer strings are judged afresh, so the memory stays bounded."""
    cached = functools.lru_cache(maxsize=1 << 16)(func)

    @functools.wraps(func)
    def judged(value: str) -> _T:
        return cached(value) if len(value) <= 256 else func(value)

    judged.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return judged


def word_set(words: str) -> frozenset[str]:
    """The whitespace-separated words of ``words``: long word lists stay readable."""
    return frozenset(words.split())


def marker(kind: str) -> str:
    """The text that stands in for a removed value: ``[REDACTED:<kind>]``."""
    return f"{MARKER_PREFIX}{kind}]"


def replace_spans(
    text: str, spans: Iterable[tuple[int, int]], kind: str, counts: Counter[str]
) -> str:
    """``text`` with each span a marker of ``kind`` (one counted each); of spans that overlap
    the first wins."""
    out: list[str] = []
    last = 0
    for start, end in sorted(set(spans)):
        if start < last:
            continue
        counts[kind] += 1
        out += [text[last:start], marker(kind)]
        last = end
    return "".join(out) + text[last:] if out else text


# One of our markers: a scrubbed text scrubbed again must come out the same, so no rule may
# read a marker's halves as a value (``https://[REDACTED:github_token]@host`` is no
# ``user:password@``).
# Its kind is the one group.
MARKER = re.compile(r"\[REDACTED:([^\]\s]{1,64})\]")
_MARKER_LONGEST = 80


def in_marker(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` overlaps one of our markers. Markers never nest, so only
    the last one opening before ``end`` can."""
    at = text.rfind(MARKER_PREFIX, max(0, start - _MARKER_LONGEST), end)
    if at < 0:
        return False
    found = MARKER.match(text, at)
    return found is not None and found.end() > start


# References to a value kept elsewhere: shell and template variables, env lookups.
_REFERENCE = re.compile(
    r"""^(?:
        \$\{[^}]*\}            # ${TOKEN}
      | \$\(?[A-Za-z_]\w*\)?(?:->?.*|\[.*|::.*)?  # $TOKEN, $(TOKEN), PHP's $request->input(...)
      | \$[A-Za-z_]\w*\$         # $TOKEN$, an IDE's macro (IntelliJ's run configurations)
      | \$(?i:env):[A-Za-z_]\w*  # PowerShell's $env:TOKEN ($Env: too)
      | %\([A-Za-z_]\w*\)[sdr]  # %(password)s, Python's %-format
      | \$\([^()]*\)          # $(cat /run/secrets/token): the command that reads it
      | `[^`]*`                # the same in backticks
      | %[A-Za-z_]\w*%          # %TOKEN%
      | \{\{.*\}\}              # {{ token }}
      | \{[A-Za-z_]\w*\}        # {token}
      | <[^<>]*>                # <your-token>
      | \[[^\[\]]*\]            # [token]
      | .*\b(?:os\.environ|os\.getenv|getenv|process\.env|ENV\[|secrets\.)\S*
      | (?:env|file|fd):[\w./-]+  # openssl's pass phrase sources (``-pass env:VAR``)
    )$""",
    re.VERBOSE,
)

# Words people write in place of a real value.
_PLACEHOLDER_WORDS = re.compile(
    r"(?i)(?:^|[^a-z])(?:your|example|sample|placeholder|dummy|changeme|change_?me|redacted"
    r"|insert|replace_?me|here|todo|fixme|xxx+|\*{3,}|\.{3}|…)(?:[^a-z]|$)"
    # A mask's dots (``ghp_••••``).
    r"|[•●·]{4,}"
    # Lower case and apart from letters and digits: base64 holds ``0fAKE9`` by chance.
    r"|(?<![A-Za-z0-9])(?-i:fake|not[-_ ](?:(?:a|the)[-_ ])?real|notreal)(?![A-Za-z0-9])"
)

# The same in Japanese (``あなたのAPIキー``: "your API key"), and AWS's documented example
# credentials, which end in ``EXAMPLE`` or ``EXAMPLEKEY`` (``wJalrXUtnFEMI/...EXAMPLEKEY``).
_PLACEHOLDER_OTHER = re.compile(r"あなたの|お使いの|ご自身の|ここに|ダミー|サンプル|EXAMPLE")

# Values that name a mode or type rather than hold a secret (``auth: basic``, ``token: null``).
PLAIN_VALUES = word_set(
    """true false yes no on off none null nil undefined empty enabled disabled required
    optional basic bearer digest oauth oauth2 token password pass passwd pwd secret string
    str int bool
    number integer object array any default auto env file true() false()"""
)


# Defaults a product's own documentation publishes (MinIO's, Java's cacerts store's,
# RabbitMQ's, Raspberry Pi OS's, Neo4j's, the official database images' examples): like
# ``changeme``, every scanner tries them first, so hiding them protects nothing.
PUBLISHED_DEFAULTS = word_set("minioadmin changeit guest raspberry neo4j admin root postgres")


# Hiragana words parted by spaces: a passphrase (Japanese writes no spaces between words).
_KANA_WORDS = re.compile(r"[ぁ-ゖー]+(?:[ \u3000][ぁ-ゖー]+)+")


def _few_distinct(body: str) -> bool:
    # ASCII letters and digits only: a value of Japanese words under a credential key is a
    # screen's label (``"password": "パスワード"``), not a value; a hiragana passphrase is.
    core = re.sub(r"[^A-Za-z0-9]", "", body).lower()
    if not core and _KANA_WORDS.fullmatch(body.strip()):
        core = re.sub(r"\s", "", body)
    return len(set(core)) <= (4 if len(core) >= 8 else 2)


@memo_short
def is_placeholder(value: str) -> bool:
    """Whether ``value`` stands for a secret rather than being one (see the module doc)."""
    text = value.strip().strip("\"'`")
    if not text or MARKER_PREFIX in text:
        return True
    lowered = text.lower()
    if lowered in PLAIN_VALUES or lowered in PUBLISHED_DEFAULTS:
        return True
    if _REFERENCE.match(text):
        return True
    if _PLACEHOLDER_WORDS.search(text) or _PLACEHOLDER_OTHER.search(text):
        return True
    return _few_distinct(text)


def says_placeholder(value: str) -> bool:
    """Whether ``value`` holds a placeholder's words (``your``, ``ダミー``), the test for a
    value in another script, whose few ASCII letters say nothing of how it was drawn."""
    return bool(_PLACEHOLDER_WORDS.search(value) or _PLACEHOLDER_OTHER.search(value))


def token_body_is_placeholder(token: str, prefix_len: int) -> bool:
    """For a provider token: whether the part after its fixed prefix is a placeholder
    (``sk-xxxxxxxx``, ``ghp_XXXXXXXX``, ``hf_...``)."""
    return is_placeholder(token[prefix_len:]) or is_placeholder(token)


__all__ = [
    "MARKER",
    "MARKER_PREFIX",
    "PLAIN_VALUES",
    "in_marker",
    "is_placeholder",
    "marker",
    "replace_spans",
    "says_placeholder",
    "token_body_is_placeholder",
    "word_set",
]
