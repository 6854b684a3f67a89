"""Secrets in text become typed markers: ``[REDACTED:github_token]``.

:class:`SecretScrubber` applies, in order: PEM private-key blocks (removed whole), passwords
in URLs (``scheme://user:[REDACTED:url_password]@host``), provider tokens and JWTs
(:mod:`~model_foundry.lib.hygiene.rules`), ``Bearer``/``Basic`` credentials, an AWS secret
key standing near an access key id, the user's own rules, values whose name says secret
(:mod:`~model_foundry.lib.hygiene.names`), and last the same inside URL-encoded runs
(``%3A%2F%2F``), which are decoded, scrubbed and encoded again. A later rule never touches an
earlier one's marker, so the most specific kind wins. What text looks like once it has been
JSON-escaped (``\\n`` in a PEM block, ``\\"`` around a value) is matched too.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from model_foundry.lib.hygiene.backstop import Backstop
from model_foundry.lib.hygiene.config import HygieneConfig
from model_foundry.lib.hygiene.csv_columns import csv_columns, markdown_columns, sql_columns
from model_foundry.lib.hygiene.key_users import key_users
from model_foundry.lib.hygiene.names import scrub_named, secret_name_kind, value_is_secret
from model_foundry.lib.hygiene.placeholders import (
    MARKER_PREFIX,
    in_marker,
    is_placeholder,
    marker,
    word_set,
)
from model_foundry.lib.hygiene.plain_passwords import plain_passwords
from model_foundry.lib.hygiene.provider_tokens import MORE_PROVIDER_RULES
from model_foundry.lib.hygiene.rules import (
    AUTH_HEADER_RULES,
    COMMAND_RULES,
    DSN_PASSWORD,
    FILE_RULES,
    PRIVATE_KEY,
    PROSE_SECRET,
    PROVIDER_RULES,
    URL_PASSWORD,
    URL_USER_TOKEN,
    Rule,
    looks_random,
)
from model_foundry.lib.hygiene.security_answers import security_answers
from model_foundry.lib.hygiene.typed_passwords import typed_passwords
from model_foundry.lib.hygiene.word_passwords import mixed_passwords, word_passwords

# An AWS secret access key: 40 base64 characters; taken only within this many characters
# of an access key id (or its marker), where it is all but certainly the pair's other half.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_AWS_NEAR = 300
_AWS_ID_MARK = marker("aws_access_key_id")

# A run of URL-encoded text with at least one escape of a character that matters here.
_URL_ENCODED = re.compile(r"[^\s\"'<>]*%(?:3[AaDd]|2[Ff]|40|26)[^\s\"'<>]*")
# The escape alone: every run above holds one. Searched first, since the run's pattern opens
# with a repeat that ``re`` tries from every position (a fifth of all scrubbing time, spent on
# text with no escape at all); this one opens with a literal ``%`` that ``re`` jumps to.
_URL_ESCAPE = re.compile(r"%(?:3[AaDd]|2[Ff]|40|26)")
# A literal that continues one a rule replaced whole, joined by ``+`` or by the next line
# (``KEY = '<first half>' +`` then ``'<second half>'``: a secret split to get past a
# scanner). The rest goes with the first part, as the same kind.
_CONCATENATED = re.compile(
    re.escape(MARKER_PREFIX)
    + r"(?P<kind>\w+)\](?P<q>[\"'`])(?P<join>[ \t]*(?:\+[ \t]*\r?\n?|\r?\n)[ \t]*)"
    r"(?P<q2>[\"'`])(?P<rest>[A-Za-z0-9+/=_.~-]{4,256})(?P=q2)"
)

# A Cookie or Set-Cookie header (RFC 6265), or curl's ``-b``/``--cookie``: its pairs' values
# are session credentials whatever the cookie is called; attributes (Path, Expires...) and
# plain words stay.
# The header ends at a line break, also an escaped one (``\r\n`` inside a string).
_COOKIE_HEADER = re.compile(
    r"(?i)(?:\b(?:set-)?cookie\\?[\"']?[ \t]*:|\bcurl\b[^\n|;&]*?[ \t](?:-b|--cookie)[ \t]+[\"']?)"
    r"[ \t]*(?P<pairs>[^\r\n\"'\\]*)"
)
_COOKIE_PAIR = re.compile(r"(?P<name>[^=;,\s]+)=(?P<value>[^;,\s]{8,})")
_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite"})

# A Kubernetes Secret: every value under ``data:`` (base64) or ``stringData:`` is secret,
# whatever its key is called (``username`` too: the manifest says so, not the name).
_K8S_SECRET = re.compile(r"""(?m)^[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?Secret\b""")
_K8S_DATA = re.compile(r"(?m)^(?P<indent>[ \t]*)(?:data|stringData):[ \t]*\r?\n")
_K8S_VALUE = re.compile(
    r"[ \t]*[^\s:#]+:[ \t]+(?P<q>[\"']?)(?P<value>[^\s\"'#|>][^\r\n\"']*?)(?P=q)[ \t]*"
)
_K8S_KIND = "k8s_secret"

_B64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# A base64 run long enough to hold ``name=value``: decoded and scrubbed, and replaced whole
# when a secret is inside (a config or header pasted as base64). Binary blobs (images,
# digests, hex ids) do not decode to text and stay.
_BASE64_MIN = 20
_BASE64_RUN = re.compile(rf"[A-Za-z0-9+/]{{{_BASE64_MIN},}}={{0,2}}")
# The run's prefilter: base64 characters mapped to one letter, then one substring test
# (3x faster than searching the run's pattern, which ``re`` tries at every position).
_BASE64_FOLD = str.maketrans(dict.fromkeys(map(ord, _B64_CHARS), "a"))
_BASE64_FOLDED_RUN = "a" * _BASE64_MIN
_BASE64_EDGE = re.compile(r"[A-Za-z0-9+/=_-]")
_TEXT_BYTES = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}


class KeywordIndex:
    """Which rules a text can match, from which of every rule's keywords it holds.

    Running each of some 50 rules over every string of a record costs a Python call and a
    full regex walk per rule (most patterns open with a lookbehind, so ``re`` cannot jump to
    a literal prefix), and most strings hold no keyword at all. A substring test per keyword
    is C's fast search (quicker than one alternation scan for all keywords, overlapping or
    not), and exact: a keyword inside another is tested too.
    The rules come back in their own order; those without keywords always."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        cased: dict[str, set[int]] = {}
        uncased: dict[str, set[int]] = {}
        for i, rule in enumerate(rules):
            for keyword in rule.keywords:
                (uncased if rule.ignores_case else cased).setdefault(keyword, set()).add(i)
        self._cased = tuple(cased.items())
        self._uncased = tuple(uncased.items())
        self._always = frozenset(i for i, r in enumerate(rules) if not r.keywords)

    def rules_for(self, text: str) -> list[Rule]:
        chosen = set(self._always)
        for keyword, rules in self._cased:
            if keyword in text:
                chosen |= rules
        if self._uncased:
            lowered = text.lower()
            for keyword, rules in self._uncased:
                if keyword in lowered:
                    chosen |= rules
        return [self.rules[i] for i in sorted(chosen)]


# The passes on what every rule left, for shapes no rule knows, in their order; True where a
# pass judges placeholders itself (a value in another script has too few ASCII letters for
# ``is_placeholder``'s count of distinct ones), so its say is the allowlist's alone.
_SHAPE_PASSES: tuple[
    tuple[Callable[[str, Counter[str], Callable[[str], bool]], str], bool], ...
] = (
    (csv_columns, False),
    (markdown_columns, False),
    (sql_columns, False),
    (word_passwords, True),
    (mixed_passwords, True),
    (typed_passwords, False),
    (key_users, False),
    (security_answers, True),
    (plain_passwords, True),
)


class SecretScrubber:
    """Scrubs text with the built-in rules plus ``config``'s own rules and allowlist."""

    def __init__(self, config: HygieneConfig | None = None) -> None:
        self.config = config or HygieneConfig()
        self._first = (
            PRIVATE_KEY,
            URL_PASSWORD,
            DSN_PASSWORD,
            *PROVIDER_RULES,
            *MORE_PROVIDER_RULES,
            *AUTH_HEADER_RULES,
            *COMMAND_RULES,
            *FILE_RULES,
            URL_USER_TOKEN,
        )
        self._keywords = KeywordIndex(self._first)
        self._backstop = Backstop(self._take) if self.config.backstop else None

    def _replaced(self, rule: Rule, match: re.Match[str], counts: Counter[str]) -> str:
        """What ``match`` of ``rule`` becomes: its secret part as a marker, if it is one."""
        named = "secret" in match.re.groupindex
        value = match.group("secret") if named else match.group(0)
        if value is None or MARKER_PREFIX in value or self.config.allowed(value):
            return match.group(0)
        start, end = match.span("secret") if named else match.span()
        if in_marker(match.string, start, end) or not rule.accept(value):
            return match.group(0)
        counts[rule.kind] += 1
        whole, base = match.group(0), match.start()
        return whole[: start - base] + marker(rule.kind) + whole[end - base :]

    def _apply(self, rule: Rule, text: str, counts: Counter[str]) -> str:
        return rule.pattern.sub(lambda match: self._replaced(rule, match, counts), text)

    def _prose(self, text: str, counts: Counter[str]) -> str:
        """:data:`PROSE_SECRET`, tried only where one of its keywords starts: every match
        opens with one, and words like "key" and "token" are in most texts, where a search
        would try the case-blind pattern at every position. The same matches as ``sub``."""
        lowered = text.lower()
        if len(lowered) != len(text):  # a lowered letter of another length: plain sub
            return self._apply(PROSE_SECRET, text, counts)
        starts: set[int] = set()
        for keyword in PROSE_SECRET.keywords:
            at = lowered.find(keyword)
            while at >= 0:
                starts.add(at)
                at = lowered.find(keyword, at + 1)
        out: list[str] = []
        last = 0
        for at in sorted(starts):
            if at < last:
                continue
            match = PROSE_SECRET.pattern.match(text, at)
            if match is None:
                continue
            out += [text[last:at], self._replaced(PROSE_SECRET, match, counts)]
            last = match.end()
        return "".join(out) + text[last:] if out else text

    def _aws_secrets(self, text: str, counts: Counter[str]) -> str:
        if _AWS_ID_MARK not in text:
            return text
        spans = [m.start() for m in re.finditer(re.escape(_AWS_ID_MARK), text)]

        def repl(match: re.Match[str]) -> str:
            value = match.group("secret")
            near = any(abs(match.start() - s) <= _AWS_NEAR for s in spans)
            mixed = re.search(r"[a-z]", value) and re.search(r"[A-Z]", value)
            if not near or not mixed or is_placeholder(value) or self.config.allowed(value):
                return match.group(0)
            counts["aws_secret_access_key"] += 1
            return marker("aws_secret_access_key")

        return _AWS_SECRET.sub(repl, text)

    def _plain(self, text: str, counts: Counter[str]) -> str:
        for rule in self._keywords.rules_for(text):
            if rule.hint is None or rule.hint.search(text):
                text = self._apply(rule, text, counts)
        text = self._aws_secrets(text, counts)
        text = scrub_cookies(text, counts, self._take)
        text = scrub_k8s_secrets(text, counts, self._take)
        for rule in self.config.rules:
            text = self._apply(rule, text, counts)
        text = joined_literals(text, counts, self._take)
        text = self._named(text, counts)
        text = seed_phrases(text, counts, self._take)
        # Last: a name in prose is the weakest sign, and every rule above names its kind.
        return self._prose(text, counts)

    def _take(self, value: str) -> bool:
        return not is_placeholder(value) and not self.config.allowed(value)

    def _not_allowed(self, value: str) -> bool:
        return not self.config.allowed(value)

    def _base64_wrapped(self, text: str, counts: Counter[str]) -> str:
        def repl(match: re.Match[str]) -> str:
            raw = match.group(0)
            before = text[match.start() - 1 : match.start()]
            after = text[match.end() : match.end() + 1]
            if (before and _BASE64_EDGE.match(before)) or (after and _BASE64_EDGE.match(after)):
                return raw
            try:
                decoded = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
            except (binascii.Error, ValueError):
                return raw
            if not decoded or any(b not in _TEXT_BYTES for b in decoded):
                return raw
            found: Counter[str] = Counter()
            self._plain(decoded.decode("ascii"), found)
            if not found:
                return raw
            counts.update(found)
            return marker(found.most_common(1)[0][0])

        return _BASE64_RUN.sub(repl, text)

    def _named(self, text: str, counts: Counter[str]) -> str:
        if not self.config.allow:
            return scrub_named(text, counts)
        return self._named_allowing(text, counts)

    def _named_allowing(self, text: str, counts: Counter[str]) -> str:
        # Allowlisted values are hidden from the name rules, then put back. The stand-in is
        # shaped as a marker, so a name rule sees a placeholder where the value stood: any
        # other stand-in would be taken for the value (``TOKEN=<stand-in>``) and scrubbed.
        kept: dict[str, str] = {}

        def hide(match: re.Match[str]) -> str:
            key = f"{MARKER_PREFIX}allowed-{len(kept)}\x00]"
            kept[key] = match.group(0)
            return key

        for pattern in self.config.allow:
            text = pattern.sub(hide, text)
        text = scrub_named(text, counts)
        for key, value in kept.items():
            text = text.replace(key, value)
        return text

    def _url_encoded(self, text: str, counts: Counter[str]) -> str:
        if "%" not in text or not _URL_ESCAPE.search(text):
            return text

        def repl(match: re.Match[str]) -> str:
            raw = match.group(0)
            decoded, where = _decode_percent(raw)
            found: Counter[str] = Counter()
            scrubbed = self._plain(decoded, found)
            if not found:
                return raw
            counts.update(found)
            # Only what the rules replaced changes: the run's other bytes, escapes and all,
            # stay as they were (a marker in place of an encoded value).
            out = []
            matcher = SequenceMatcher(None, decoded, scrubbed, autojunk=False)
            for op, i1, i2, j1, j2 in matcher.get_opcodes():
                if op == "equal":
                    out.append(raw[where[i1] : where[i2]])
                else:
                    out.append(scrubbed[j1:j2])
            return "".join(out)

        return _URL_ENCODED.sub(repl, text)

    def scrub(self, text: str, counts: Counter[str] | None = None) -> str:
        """``text`` with every secret replaced; ``counts`` (if given) gains one per marker."""
        counts = counts if counts is not None else Counter()
        text = self._url_encoded(self._plain(text, counts), counts)
        if _BASE64_FOLDED_RUN in text.translate(_BASE64_FOLD):
            text = self._base64_wrapped(text, counts)
        # Last, on what every rule left: a random value beside a cue in a shape no rule knows.
        if self._backstop is not None:
            for shape_pass, judges_placeholders in _SHAPE_PASSES:
                take = self._not_allowed if judges_placeholders else self._take
                text = shape_pass(text, counts, take)
            text = self._backstop.scrub(text, counts)
        if MARKER_PREFIX in text:
            text = _concatenated(text, self._take)
        return text


# A wallet's recovery phrase (BIP39: 12 to 24 lowercase words) after a word naming one, on its
# line or within a few lines below (a note's quote, a code block).
_SEED_CUE = re.compile(
    r"(?i)(?:seed|recovery|backup|secret|wallet|mnemonic)[ _-]?(?:phrase|words)|mnemonic"
    r"|bip-?39|シードフレーズ|リカバリーフレーズ|復元フレーズ|ニーモニック"
)
_SEED_HINTS = ("phrase", "words", "mnemonic", "bip", "フレーズ", "ニーモニック")
_SEED_WINDOW = 200
_SEED_WORDS = re.compile(r"(?<![\w-])(?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8}(?![\w-])")
_SEED_LENGTHS = frozenset({12, 15, 18, 21, 24})
# A sentence has some of these; a recovery phrase (a draw from a word list) seldom does.
_SENTENCE_WORDS = word_set(
    "the and for with from this that are was you your our not but have has will into"
)


def seed_phrases(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """Recovery phrases after their cue (see :data:`_SEED_CUE`): 12, 15, 18, 21 or 24
    lowercase words of 3 to 8 letters, no sentence's small words among them (and ``take``
    must agree: an allowed phrase stays)."""
    lowered = text.lower()
    if not any(hint in lowered for hint in _SEED_HINTS):
        return text
    spans: list[tuple[int, int]] = []
    for cue in _SEED_CUE.finditer(text):
        found = _SEED_WORDS.search(text, cue.end(), cue.end() + _SEED_WINDOW)
        if found is None:
            continue
        words = found.group(0).split()
        if (
            len(words) in _SEED_LENGTHS
            and _SENTENCE_WORDS.isdisjoint(words)
            and take(found.group(0))
        ):
            spans.append(found.span())
    for start, end in sorted(set(spans), reverse=True):
        counts["secret"] += 1
        text = text[:start] + marker("secret") + text[end:]
    return text


# A value written as string literals joined in code under one name: Python's and C's
# adjacent literals in brackets, or ``+`` between them (Java, JS, Go), over several lines.
_LITERAL = r"(?:\"[^\"\n]*\"|'[^'\n]*')"
_JOINED = re.compile(
    rf"(?P<name>[A-Za-z_][\w.]*)[ \t]*(?::[ \t]*\w+[ \t]*)?(?::=|=)[ \t]*(?P<open>\()?\s*"
    rf"(?P<lits>{_LITERAL}(?:\s*\+?\s*{_LITERAL})+)\s*(?(open)\))"
)
_LITERAL_BODY = re.compile(rf"{_LITERAL}")
# A name holding a credential word, assigned (a type between) a literal or a bracket.
_SECRET_ASSIGN = re.compile(
    r"(?i)(?:pass|pw|token|secret|key|pat|auth|cred)\w*[ \t]*(?::[ \t]*\w+[ \t]*)?:?=[ \t]*\(?"
    r"\s*[\"']"
)
# Where two literals meet: a quote, maybe ``+``, a line break or blanks, a quote.
_JOIN_MARK = re.compile(r"[\"'][ \t]*\+?[ \t]*\n\s*[\"']|[\"'](?:[ \t]*\+|[ \t])[ \t]*[\"']")


def joined_literals(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """Each literal of a secret split into several under a secret's name (``HARNESS_PAT =
    ("pat.x." "y." "z")``): the joined value is judged as the name rules judge one."""
    if text.count('"') + text.count("'") < 4 or not _JOIN_MARK.search(text):
        return text
    # Only where a name with a credential word is assigned a literal: the full pattern, tried
    # from every name of a source file, cost a sixth of all scrubbing time on code.
    out: list[str] = []
    last = 0
    for hit in _SECRET_ASSIGN.finditer(text):
        at = hit.start()
        while at > last and (text[at - 1].isalnum() or text[at - 1] in "_."):
            at -= 1
        match = _JOINED.match(text, at)
        if match is None or match.start() < last:
            continue
        kind = secret_name_kind(match.group("name").rsplit(".", 1)[-1])
        lits = match.group("lits")
        joined = "".join(m.group(0)[1:-1] for m in _LITERAL_BODY.finditer(lits))
        if kind is None or not value_is_secret(kind, joined) or not take(joined):
            continue
        counts[kind] += 1
        hidden = _LITERAL_BODY.sub(
            lambda m, k=kind: m.group(0)[0] + marker(k) + m.group(0)[0], lits
        )
        out += [text[last : match.start("lits")], hidden]
        last = match.end("lits")
    return "".join(out) + text[last:] if out else text


def _concatenated(text: str, take: Callable[[str], bool]) -> str:
    """The rest of a split secret (see :data:`_CONCATENATED`) as a marker of the first
    part's kind; not counted again, since it is the same value. ``take`` says which rests
    may go (placeholders and allowed values stay)."""

    def repl(match: re.Match[str]) -> str:
        if not take(match.group("rest")):
            return match.group(0)
        head = match.group(0)[: match.start("rest") - match.start()]
        return head + marker(match.group("kind")) + match.group("q2")

    for _ in range(8):  # a secret split in more than two
        joined = _CONCATENATED.sub(repl, text)
        if joined == text:
            break
        text = joined
    return text


def scrub_cookies(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """Each pair of a ``Cookie:``/``Set-Cookie:`` header or of curl's ``-b`` whose value mixes
    letters and digits."""
    lowered = text.lower()
    if "cookie" not in lowered and "curl" not in lowered:
        return text

    def pair(match: re.Match[str]) -> str:
        name, value = match.group("name"), match.group("value")
        if name.lower() in _COOKIE_ATTRIBUTES or MARKER_PREFIX in value:
            return match.group(0)
        if not _mixed(value) or not take(value):
            return match.group(0)
        counts["cookie"] += 1
        return f"{name}={marker('cookie')}"

    def header(match: re.Match[str]) -> str:
        start = match.start("pairs") - match.start()
        whole = match.group(0)
        return whole[:start] + _COOKIE_PAIR.sub(pair, match.group("pairs"))

    return _COOKIE_HEADER.sub(header, text)


def scrub_k8s_secrets(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """Every value under ``data:``/``stringData:`` of a Kubernetes Secret, whatever its key."""
    if "Secret" not in text or not _K8S_SECRET.search(text):
        return text
    out, pos = [], 0
    for block in _K8S_DATA.finditer(text):
        if block.start() < pos:
            continue
        out.append(text[pos : block.end()])
        pos = block.end()
        indent = len(block.group("indent"))
        # The block's entries: the lines indented deeper than ``data:``.
        while pos < len(text):
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end + 1
            line = text[pos:end]
            body = line.rstrip("\r\n")
            if body.strip() and len(body) - len(body.lstrip(" \t")) <= indent:
                break
            entry = _K8S_VALUE.fullmatch(body)
            if entry and take(entry.group("value")):
                counts[_K8S_KIND] += 1
                s, e = entry.span("value")
                line = body[:s] + marker(_K8S_KIND) + body[e:] + line[len(body) :]
            out.append(line)
            pos = end
    out.append(text[pos:])
    return "".join(out)


def _mixed(value: str) -> bool:
    """A cookie's value is a session id (letters and digits), not a word (``dark``)."""
    return (
        looks_random(value)
        and bool(re.search(r"[0-9]", value))
        and bool(re.search(r"[A-Za-z]", value))
    )


def _decode_percent(raw: str) -> tuple[str, list[int]]:
    """``raw`` with its ``%XX`` escapes decoded, and where each decoded character starts in
    ``raw`` (one more entry: the end). Multi-byte UTF-8 escapes are left as written."""
    decoded: list[str] = []
    where: list[int] = []
    i = 0
    while i < len(raw):
        where.append(i)
        byte = raw[i + 1 : i + 3]
        if raw[i] == "%" and len(byte) == 2 and byte.isalnum():
            value = int(byte, 16) if all(c in "0123456789abcdefABCDEF" for c in byte) else -1
            if 0 <= value < 0x80:
                decoded.append(chr(value))
                i += 3
                continue
        decoded.append(raw[i])
        i += 1
    where.append(len(raw))
    return "".join(decoded), where


def scrub_secrets(text: str, config: HygieneConfig | None = None) -> tuple[str, Counter[str]]:
    """Convenience: ``text`` scrubbed with the built-in rules (and ``config``) and the counts."""
    counts: Counter[str] = Counter()
    return SecretScrubber(config).scrub(text, counts), counts


__all__ = ["SecretScrubber", "scrub_secrets"]
