"""The corpus's data model: encodings, alphabets, a planted value and a case."""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

WHERES: tuple[str, ...] = (
    "user_turn",
    "assistant_turn",
    "reasoning",
    "tool_arguments",
    "tool_result",
    "env_dump",
)
FRAGMENT = 12
ENCODINGS: tuple[str, ...] = ("plain", "json", "json2", "url", "base64")

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B32 = string.ascii_uppercase + "234567"
BECH32_UPPER = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
# Passwords written as they are: safe unencoded in URLs' user info, shells and config files.
PW = ALNUM + "-_.~!*+"
# Passwords that only ever appear URL-encoded.
PW_SPECIAL = "@:/+=?&#% "


def _json_escape(text: str) -> str:
    return json.dumps(text)[1:-1]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def encode(text: str, encoding: str) -> str:
    """``text`` in one of :data:`ENCODINGS` (``base64`` is standard, padded base64)."""
    if encoding == "plain":
        return text
    if encoding == "json":
        return _json_escape(text)
    if encoding == "json2":
        return _json_escape(_json_escape(text))
    if encoding == "url":
        return quote(text, safe="")
    if encoding == "base64":
        return _b64(text)
    raise ValueError(f"unknown encoding {encoding!r}")


@dataclass(frozen=True)
class Plant:
    """One secret value hidden in a case's text.

    ``value`` is the secret as a person would name it (a token, a password, a PEM key);
    ``random_part`` is its generated part, a substring of ``value``, which must not survive.
    ``encoding`` says how it is written in the text; for ``base64``, ``wrapped`` is the exact
    text that was encoded (``user:password`` for HTTP Basic, a ``KEY=value`` line...), which
    contains ``value``; empty means the value alone.
    """

    kind: str
    context: str
    value: str
    random_part: str
    encoding: str = "plain"
    wrapped: str = ""

    @property
    def shown(self) -> str:
        """The value as it is written in the case's text."""
        if self.encoding == "base64":
            return _b64(self.wrapped or self.value)
        return encode(self.value, self.encoding)

    @property
    def leak_forms(self) -> tuple[str, ...]:
        """Strings whose presence means the value leaked whole."""
        forms = [self.random_part]
        if self.encoding == "base64":
            forms.append(self.shown)
        elif self.encoding != "plain":
            forms.append(encode(self.random_part, self.encoding))
        return tuple(dict.fromkeys(forms))

    @property
    def fragment_sources(self) -> tuple[str, ...]:
        """Strings none of whose 12-character windows may survive."""
        sources = [self.random_part]
        if self.encoding == "base64":
            sources.append(self._base64_random_region())
        elif self.encoding != "plain":
            sources.append(encode(self.random_part, self.encoding))
        return tuple(s for s in dict.fromkeys(sources) if s)

    def _base64_random_region(self) -> str:
        """The base64 characters that depend only on bytes of the random part."""
        wrapped = (self.wrapped or self.value).encode("utf-8")
        value = self.value.encode("utf-8")
        start = wrapped.index(value) + value.index(self.random_part.encode("utf-8"))
        end = start + len(self.random_part.encode("utf-8"))
        first = -(-8 * start // 6)
        last = 8 * end // 6
        return self.shown[first:last]


@dataclass(frozen=True)
class Case:
    """A text an agent session holds, and what a scrubber must remove from it and keep.

    ``where`` is the session location (one of :data:`WHERES`); ``source`` is the file path or
    the command that produced or receives the text, which :func:`as_events` uses to shape the
    tool call.
    """

    text: str
    plants: tuple[Plant, ...]
    negatives: tuple[str, ...]
    keep_words: tuple[str, ...]
    where: str
    source: str = ""


def oracle_scrub(plants: Iterable[Plant], text: str, mask: str = "[REDACTED]") -> str:
    """Replace every form of the given plants: a scrubber that knows the answers."""
    forms = {f for p in plants for f in (p.shown, p.value, *p.leak_forms)}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, mask)
    return text
