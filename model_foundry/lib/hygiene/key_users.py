"""A key pair's id in a login's user field.

Many services hand out credentials as a pair, an id and a secret, and their clients take the
pair as a user name and a password: Kafka's SASL (Confluent's API key and secret), Maven's
``<server>`` (Sonatype's user token), an API key's id in HTTP Basic. The password beside it is
taken by the rules; the id is a draw no person would choose as a name, and half the
credential. So a user field's value is taken when it is random (``randomness``: both cases
with digits, or one case and digits interleaved) and a password field or a password's marker
stands within :data:`_LINES` lines of it. A person's login (``mika``, ``deploy-bot``,
``svc_backup01``) has a word in it and stays, and so does our own alias for a user
(``user_<hex>``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from model_foundry.lib.hygiene.backstop import randomness
from model_foundry.lib.hygiene.placeholders import MARKER_PREFIX, is_placeholder, marker

# ``username='<v>'``, ``user: <v>``, ``<username><v></username>``, ``"login": "<v>"``, with
# any prefix of dotted or joined names (``sasl.username``, ``KAFKA_USER``).
_USER_FIELD = re.compile(
    r"(?i)(?<![A-Za-z])(?:[\w.-]*[._-])?(?:user(?:name)?|login)(?![A-Za-z])"
    r"(?:[\"']?[ \t]*[:=][ \t]*|>)[\"']?(?P<value>[A-Za-z0-9_-]{8,64})(?=[\"'<\s,;]|$)"
)
_PASSWORD_FIELD = re.compile(r"(?i)pass(?:word|wd|phrase)?|secret|" + re.escape(MARKER_PREFIX))
_LINES = 3
_ALIAS = re.compile(r"user_[0-9a-f]{10}")


def _near(text: str, start: int, end: int) -> str:
    """The lines around ``text[start:end]``: :data:`_LINES` before and after."""
    lo = start
    for _ in range(_LINES + 1):
        lo = text.rfind("\n", 0, lo - 1) if lo > 0 else -1
        if lo < 0:
            break
    hi = end
    for _ in range(_LINES + 1):
        hi = text.find("\n", hi + 1)
        if hi < 0:
            break
    return text[max(lo, 0) : start] + text[end : hi if hi >= 0 else len(text)]


def key_users(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """``text`` with each random user field beside a password taken (the module doc)."""
    lowered = text.lower()
    if "user" not in lowered and "login" not in lowered:
        return text

    def user(match: re.Match[str]) -> str:
        value = match.group("value")
        if (
            randomness(value) is None
            or not any(c.isdigit() for c in value)
            or _ALIAS.fullmatch(value)
            or is_placeholder(value)
            or not take(value)
            or not _PASSWORD_FIELD.search(_near(text, match.start(), match.end()))
        ):
            return match.group(0)
        counts["api_key"] += 1
        head = match.group(0)[: match.start("value") - match.start()]
        return head + marker("api_key")

    return _USER_FIELD.sub(user, text)
