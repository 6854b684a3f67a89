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

A secret found once is removed wherever else the record holds it (:func:`echo_forms`): an agent
sets a token where a rule sees it (``export TOKEN=...``), then the value comes back where
none could (a tool's output, an error message, a note "raw value: ..."), percent-encoded or
decoded, or escaped inside a JSON string. A value a rule took wrongly goes everywhere too.

A string's scrubbed form depends on nothing but the string (and the scrubber's rules and
salt), so each scrubber remembers the strings it has seen: the system prompts, tool schemas,
tool names and call types that every record of an export repeats are scrubbed once. The
memory is bounded (``_CACHE_CHARS``) and cleared when full.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote, quote_plus, unquote

from model_foundry.lib.hygiene.config import HygieneConfig, load_config
from model_foundry.lib.hygiene.names import secret_name_kind, value_is_secret
from model_foundry.lib.hygiene.pii import PiiScrubber, load_salt
from model_foundry.lib.hygiene.placeholders import MARKER, MARKER_PREFIX, is_placeholder, marker
from model_foundry.lib.hygiene.secrets import SecretScrubber

# What the remembered strings may hold, in characters (inputs and outputs): some 64 MB at
# most, the same at a thousand records as at a million.
_CACHE_CHARS = 16 * 2**20
# A Kubernetes Secret's fields whose values are all secret, and their marker's kind.
_SECRET_DATA = ("data", "stringData")
_K8S_KIND = "k8s_secret"
# A string's scrubbed form, the markers it got by kind, and the values they replaced with
# their kinds.
_Scrubbed = tuple[str, tuple[tuple[str, int], ...], tuple[tuple[str, str], ...]]
# A removed value shorter than this is not looked for elsewhere: a PIN or a short word
# would take the same digits or letters out of unrelated text.
ECHO_MIN_CHARS = 8


def removed_values(before: str, after: str) -> list[tuple[str, str]]:
    """The values the markers in ``after`` stand for in ``before``, with their kinds.

    ``after`` is ``before`` with spans replaced by markers and nothing else changed, so the
    text between markers is found in ``before`` in order and what lies between is removed.
    Adjacent markers give one value (of the first kind). A marker that ``before`` already
    held is no value. If the text does not line up (a pass changed more than a span), the
    values found up to there are returned."""
    pieces = MARKER.split(after)
    if len(pieces) == 1 or not before.startswith(pieces[0]):
        return []
    texts, kinds = pieces[0::2], pieces[1::2]
    found: list[tuple[str, str]] = []
    at = len(texts[0])
    kind: str | None = None
    for text, next_kind in zip(texts[1:], kinds, strict=True):
        kind = kind or next_kind
        if not text:
            continue  # the next marker follows at once: one value
        end = before.find(text, at + 1)
        if end < 0:
            return found
        if MARKER_PREFIX not in before[at:end]:
            found.append((before[at:end], kind))
        at, kind = end + len(text), None
    if kind is not None and at < len(before) and MARKER_PREFIX not in before[at:]:
        found.append((before[at:], kind))
    return found


def _forms(value: str) -> set[str]:
    """``value`` as a text may hold it again: as written, percent-decoded or -encoded, and
    escaped inside a JSON string."""
    forms = {value, quote(value, safe=""), quote_plus(value, safe="")}
    if "%" in value:
        forms.add(unquote(value))
    forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
    return {f for f in forms if len(f) >= ECHO_MIN_CHARS}


# From this many forms in a record, one pattern finds them all (see ``_echoes``).
_ECHO_PATTERN_FROM = 16


@functools.lru_cache(maxsize=64)
def _echo_pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, forms)))


def echo_forms(values: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Every form of every value worth looking for (see :data:`ECHO_MIN_CHARS`) with its
    kind, longest first (so a value's encoded form goes before a part of it could)."""
    kinds: dict[str, str] = {}
    for value, kind in values:
        if len(value) < ECHO_MIN_CHARS or is_placeholder(value) or MARKER_PREFIX in value:
            continue
        for form in _forms(value):
            kinds.setdefault(form, kind)
    return sorted(kinds.items(), key=lambda item: len(item[0]), reverse=True)


def _json_document(text: str) -> dict[str, Any] | list[Any] | None:
    """``text`` parsed, when it is a JSON object or array (it opens with ``{`` or ``[``)."""
    if text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        inner = json.loads(text)
    except ValueError:
        return None
    return inner if isinstance(inner, dict | list) else None


def _json_lines(
    text: str, walk: Callable[[str, dict[str, Any] | list[Any]], tuple[str, dict[str, str]]]
) -> tuple[str, dict[str, str]]:
    """``text`` with each line that is a JSON object or array on its own (an agent's log of
    tool calls and results, one event a line) as ``walk`` leaves it, and what it removed:
    its strings unescaped, each key beside its value, as a whole document would be."""
    lines = text.split("\n")
    removed: dict[str, str] = {}
    for i, line in enumerate(lines):
        body = line.strip()
        if len(body) < 2 or (body[0], body[-1]) not in (("{", "}"), ("[", "]")):
            continue
        inner = _json_document(body)
        if inner is None:
            continue
        scrubbed, gone = walk(body, inner)
        if scrubbed != body:
            lines[i] = line[: line.index(body[0])] + scrubbed
            removed |= gone
    return "\n".join(lines), removed


class RecordScrubber:
    """Secrets and PII for records; build one per export and reuse it for every record."""

    def __init__(self, config: HygieneConfig | None = None, salt: bytes = b"") -> None:
        self.config = config or HygieneConfig()
        self.secrets = SecretScrubber(self.config)
        self.pii = PiiScrubber(salt, self.config.pii)
        self._seen: dict[str, _Scrubbed] = {}
        self._seen_chars = 0
        # The values removed from the record being walked, with their kinds.
        self._removed: dict[str, str] = {}

    @classmethod
    def from_settings(cls) -> RecordScrubber:
        """The hygiene file and the salt of this installation (both under the data folder)."""
        return cls(load_config(), load_salt())

    def scrub_text(self, text: str, counts: Counter[str]) -> str:
        return self.pii.scrub(self.secrets.scrub(text, counts), counts)

    def _fresh(self, text: str, counts: Counter[str]) -> tuple[str, dict[str, str]]:
        inner = _json_document(text)
        if inner is not None:
            return self._document(text, inner, counts)
        removed: dict[str, str] = {}
        if "\n" in text and ("\n{" in text or "\n[" in text or text.lstrip()[:1] in "{["):
            text, removed = _json_lines(text, lambda line, doc: self._document(line, doc, counts))
        secret_free = self.secrets.scrub(text, counts)
        if secret_free != text:
            removed |= dict(removed_values(text, secret_free))
        return self.pii.scrub(secret_free, counts), removed

    def _document(
        self, text: str, inner: dict[str, Any] | list[Any], counts: Counter[str]
    ) -> tuple[str, dict[str, str]]:
        """``text``, which parsed as ``inner``, walked value by value, then read whole."""
        found: Counter[str] = Counter()
        outer, self._removed = self._removed, {}
        try:
            scrubbed = self._walk(inner, found)
            removed = self._removed
        finally:
            self._removed = outer
        # The walk judges each value alone; the text passes see a key beside its value
        # (``"hook_tok": "..."``, ``"DB_PSWD": "..."``), as in any other text.
        walked = json.dumps(scrubbed, ensure_ascii=False) if found else text
        whole = self.secrets.scrub(walked, found)
        if whole != walked:
            removed |= dict(removed_values(walked, whole))
        elif not found:
            return text, {}
        counts.update(found)
        return whole, removed

    def _scrubbed(self, text: str) -> _Scrubbed:
        seen = self._seen.get(text)
        if seen is None:
            found: Counter[str] = Counter()
            scrubbed, removed = self._fresh(text, found)
            seen = (scrubbed, tuple(found.items()), tuple(removed.items()))
            self._seen_chars += len(text) + len(seen[0])
            if self._seen_chars > _CACHE_CHARS:
                self._seen.clear()
                self._seen_chars = len(text) + len(seen[0])
            self._seen[text] = seen
        return seen

    def _string(self, text: str, counts: Counter[str]) -> str:
        scrubbed, found, removed = self._scrubbed(text)
        for kind, n in found:
            counts[kind] += n
        self._removed.update(removed)
        return scrubbed

    def _named_value(self, key: str, value: str, counts: Counter[str]) -> str:
        if not self._scrubbed(value)[1]:
            kind = secret_name_kind(key)
            if kind and value_is_secret(kind, value) and not self.config.allowed(value):
                counts[kind] += 1
                self._removed[value] = kind
                return marker(kind)
        return self._string(value, counts)

    def _secret_data(self, data: Any, counts: Counter[str]) -> Any:
        """A Kubernetes Secret's ``data``/``stringData``: every string value is secret,
        whatever its key is called (placeholders and allowed values stay)."""
        if not isinstance(data, dict):
            return self._walk(data, counts)
        out = {}
        for key, item in data.items():
            if isinstance(item, str) and not is_placeholder(item) and not self.config.allowed(item):
                counts[_K8S_KIND] += 1
                self._removed[item] = _K8S_KIND
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

    def _echoes(self, value: Any, forms: list[tuple[str, str]], counts: Counter[str]) -> Any:
        # A record's few forms by substring search: compiling a pattern for each record cost
        # a third of all scrubbing time on the corpora. Past :data:`_ECHO_PATTERN_FROM` forms
        # (a file of test fixtures), one pattern's single pass is cheaper than a scan a form.
        if isinstance(value, str):
            if len(forms) >= _ECHO_PATTERN_FROM:
                kinds = dict(forms)

                def repl(match: re.Match[str]) -> str:
                    counts[kinds[match.group(0)]] += 1
                    return marker(kinds[match.group(0)])

                return _echo_pattern(tuple(f for f, _ in forms)).sub(repl, value)
            for form, kind in forms:
                if form in value:
                    counts[kind] += value.count(form)
                    value = value.replace(form, marker(kind))
            return value
        if isinstance(value, dict):
            return {k: self._echoes(v, forms, counts) for k, v in value.items()}
        if isinstance(value, list):
            return [self._echoes(v, forms, counts) for v in value]
        return value

    def scrub(self, record: Any) -> tuple[Any, Counter[str]]:
        """A scrubbed copy of ``record`` and how many markers of each kind it got."""
        counts: Counter[str] = Counter()
        self._removed = {}
        try:
            scrubbed = self._walk(record, counts)
            removed = [(v, k) for v, k in self._removed.items() if not self.config.allowed(v)]
        finally:
            self._removed = {}
        forms = echo_forms(removed) if removed else []
        if forms:
            scrubbed = self._echoes(scrubbed, forms, counts)
        return scrubbed, counts


def scrub(record: Any, scrubber: RecordScrubber | None = None) -> tuple[Any, dict[str, int]]:
    """``(scrubbed record, counts by kind)``; without ``scrubber``, this installation's
    hygiene file and salt are read (pass one when scrubbing many records)."""
    scrubbed, counts = (scrubber or RecordScrubber.from_settings()).scrub(record)
    return scrubbed, dict(sorted(counts.items()))


__all__ = ["RecordScrubber", "scrub"]
