"""Scrub a whole record: every string, however deep, in whatever shape a chat export has.

An OpenAI chat record holds text in many places: ``messages[].content`` (a string or a list
of parts), ``tool_calls[].function.arguments`` (a JSON document inside a string), tool
results, ``reasoning``/``reasoning_content`` and the ``tools`` schemas. :func:`scrub` walks
dicts and lists and treats every string the same way:

- a string that parses as a JSON object or array is scrubbed inside and, only if something
  was replaced, encoded again (so an untouched ``arguments`` string keeps its bytes);
- any other string goes through the secret rules, then the PII rules;
- a string under a key whose name says secret (``"password": "..."``) that the text rules
  left alone is replaced whole.

Keys are left as they are. The counts say how many markers of each kind were written; the
dataset card and manifest report them.

A string's scrubbed form depends on nothing but the string (and the scrubber's rules and
salt), so each scrubber remembers the strings it has seen: the system prompts, tool schemas,
tool names and call types that every record of an export repeats are scrubbed once. The
memory is bounded (``_CACHE_CHARS``) and cleared when full.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from model_foundry.lib.hygiene.config import HygieneConfig, load_config
from model_foundry.lib.hygiene.names import secret_name_kind, value_is_secret
from model_foundry.lib.hygiene.pii import PiiScrubber, load_salt
from model_foundry.lib.hygiene.placeholders import is_placeholder, marker
from model_foundry.lib.hygiene.secrets import SecretScrubber

# What the remembered strings may hold, in characters (inputs and outputs): some 64 MB at
# most, the same at a thousand records as at a million.
_CACHE_CHARS = 16 * 2**20
# A Kubernetes Secret's fields whose values are all secret, and their marker's kind.
_SECRET_DATA = ("data", "stringData")
_K8S_KIND = "k8s_secret"
# A string's scrubbed form and the markers it got, by kind.
_Scrubbed = tuple[str, tuple[tuple[str, int], ...]]


class RecordScrubber:
    """Secrets and PII for records; build one per export and reuse it for every record."""

    def __init__(self, config: HygieneConfig | None = None, salt: bytes = b"") -> None:
        self.config = config or HygieneConfig()
        self.secrets = SecretScrubber(self.config)
        self.pii = PiiScrubber(salt, self.config.pii)
        self._seen: dict[str, _Scrubbed] = {}
        self._seen_chars = 0

    @classmethod
    def from_settings(cls) -> RecordScrubber:
        """The hygiene file and the salt of this installation (both under the data folder)."""
        return cls(load_config(), load_salt())

    def scrub_text(self, text: str, counts: Counter[str]) -> str:
        return self.pii.scrub(self.secrets.scrub(text, counts), counts)

    def _fresh(self, text: str, counts: Counter[str]) -> str:
        head = text.lstrip()[:1]
        if head in ("{", "["):
            try:
                inner = json.loads(text)
            except ValueError:
                inner = None
            if isinstance(inner, dict | list):
                found: Counter[str] = Counter()
                scrubbed = self._walk(inner, found)
                if not found:
                    return text
                counts.update(found)
                return json.dumps(scrubbed, ensure_ascii=False)
        return self.scrub_text(text, counts)

    def _scrubbed(self, text: str) -> _Scrubbed:
        seen = self._seen.get(text)
        if seen is None:
            found: Counter[str] = Counter()
            seen = (self._fresh(text, found), tuple(found.items()))
            self._seen_chars += len(text) + len(seen[0])
            if self._seen_chars > _CACHE_CHARS:
                self._seen.clear()
                self._seen_chars = len(text) + len(seen[0])
            self._seen[text] = seen
        return seen

    def _string(self, text: str, counts: Counter[str]) -> str:
        scrubbed, found = self._scrubbed(text)
        for kind, n in found:
            counts[kind] += n
        return scrubbed

    def _named_value(self, key: str, value: str, counts: Counter[str]) -> str:
        scrubbed, found = self._scrubbed(value)
        if not found:
            kind = secret_name_kind(key)
            if kind and value_is_secret(kind, value) and not self.config.allowed(value):
                counts[kind] += 1
                return marker(kind)
        for kind, n in found:
            counts[kind] += n
        return scrubbed

    def _secret_data(self, data: Any, counts: Counter[str]) -> Any:
        """A Kubernetes Secret's ``data``/``stringData``: every string value is secret,
        whatever its key is called (placeholders and allowed values stay)."""
        if not isinstance(data, dict):
            return self._walk(data, counts)
        out = {}
        for key, item in data.items():
            if isinstance(item, str) and not is_placeholder(item) and not self.config.allowed(item):
                counts[_K8S_KIND] += 1
                out[key] = marker(_K8S_KIND)
            else:
                out[key] = self._walk(item, counts)
        return out

    def _entry(self, key: Any, value: Any, counts: Counter[str]) -> Any:
        if isinstance(key, str) and isinstance(value, str):
            return self._named_value(key, value, counts)
        return self._walk(value, counts)

    def _walk(self, value: Any, counts: Counter[str]) -> Any:
        if isinstance(value, str):
            return self._string(value, counts)
        if isinstance(value, dict) and value.get("kind") == "Secret":
            # A Secret as JSON (``kubectl get secret -o json``): string by string, the walk
            # would not know that ``username`` is secret here.
            return {
                k: self._secret_data(v, counts) if k in _SECRET_DATA else self._entry(k, v, counts)
                for k, v in value.items()
            }
        if isinstance(value, dict):
            return {k: self._entry(k, v, counts) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._walk(v, counts) for v in value]
        return value

    def scrub(self, record: Any) -> tuple[Any, Counter[str]]:
        """A scrubbed copy of ``record`` and how many markers of each kind it got."""
        counts: Counter[str] = Counter()
        return self._walk(record, counts), counts


def scrub(record: Any, scrubber: RecordScrubber | None = None) -> tuple[Any, dict[str, int]]:
    """``(scrubbed record, counts by kind)``; without ``scrubber``, this installation's
    hygiene file and salt are read (pass one when scrubbing many records)."""
    scrubbed, counts = (scrubber or RecordScrubber.from_settings()).scrub(record)
    return scrubbed, dict(sorted(counts.items()))


__all__ = ["RecordScrubber", "scrub"]
